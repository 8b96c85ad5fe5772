internal import CLZ4
import Synchronization

/// The liblz4 block API, wrapped so that no C type leaves this file.
enum LZ4 {
    /// Appends the LZ4 compression of `source` to `output` and returns the compressed size, or
    /// returns `nil` (appending nothing) when compression would not save at least 1/16 of the size.
    ///
    /// Each call makes one independent block with `LZ4_compress_fast_extState`, in a
    /// compression state borrowed from ``states``, into the state's scratch buffer, so only the
    /// compressed bytes are copied into `output`. The scratch buffer holds liblz4's bound for
    /// the input, so the call never fails. `LZ4_compress_fast_extState` initializes the state
    /// each time and, for an input under 64 KiB, hashes positions into 16-bit entries; a
    /// streaming state reset with `LZ4_resetStream_fast` and `LZ4_compress_fast_continue` kept
    /// 32-bit entries and a dictionary check. On this project's reference machine (a C program
    /// over liblz4 1.9.4, English text, acceleration 1) a 16 KiB block took 29.5 µs instead of
    /// 37, a 4 KiB one 6.8 instead of 9.7, a 2 KB one 3.2 instead of 3.9 and a 1 KB one 2.1
    /// instead of 2.2, compressed as small or smaller (within 1.7%); a bulk insert through the
    /// object graph (W1 at 100,000 rows) ran ~3% faster.
    static func compress(_ source: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) -> Int? {
        guard source.count > 64, source.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let limit = source.count - source.count / 16
        let state = states.take() ?? CompressionState()
        defer { states.put(state) }
        guard let produced = state.compress(source), produced <= limit else { return nil }
        output.append(contentsOf: UnsafeRawBufferPointer(start: state.scratch, count: produced))
        return produced
    }

    /// Decompresses `source` into exactly `rawCount` bytes.
    ///
    /// - Returns: the bytes, or `nil` when `source` is not an LZ4 block of that size.
    static func decompress(_ source: UnsafeRawBufferPointer, rawCount: Int) -> [UInt8]? {
        guard canExpand(source.count, to: rawCount) else { return nil }
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: rawCount) { buffer, initialized in
            ok = decompress(source, into: UnsafeMutableRawPointer(buffer.baseAddress), rawCount: rawCount)
            initialized = ok ? rawCount : 0
        }
        return ok ? bytes : nil
    }

    /// The most an LZ4 block expands: each byte of it makes at most 255 bytes of output.
    static let maximumRatio = 255

    /// Whether `count` compressed bytes can decompress to `rawCount`: a damaged length that no
    /// LZ4 block of that size reaches is refused before its memory is allocated.
    static func canExpand(_ count: Int, to rawCount: Int) -> Bool {
        rawCount >= 0 && rawCount / maximumRatio <= count
    }

    /// Decompresses `source` into exactly the `rawCount` bytes at `target`; returns whether
    /// `source` is an LZ4 block of that size.
    static func decompress(
        _ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawPointer?, rawCount: Int
    ) -> Bool {
        guard rawCount >= 0, source.count <= Int(Int32.max), rawCount <= Int(Int32.max) else { return false }
        let produced = LZ4_decompress_safe(
            source.baseAddress?.assumingMemoryBound(to: CChar.self), target?.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(rawCount))
        return Int(produced) == rawCount
    }

    /// Compression states not in use, shared by every thread that compresses.
    private static let states = StatePool()

    /// A few compression states not in use, each in a slot of its own taken and filled with one
    /// atomic exchange: no lock, so that many threads compressing at once (contexts saving
    /// concurrently, each encoding its record) never wait in the kernel for one another, as
    /// they did on a `Mutex` (a priority-inheritance futex on Linux) around an array of states.
    private final class StatePool: @unchecked Sendable {
        /// How many slots there are: states returned when every slot is full are freed.
        static let slotCount = 8
        /// The slots: each an unmanaged, retained state's address, or 0 when empty.
        private let slots: UnsafeMutablePointer<Atomic<UInt>>

        init() {
            slots = .allocate(capacity: Self.slotCount)
            for slot in 0..<Self.slotCount { (slots + slot).initialize(to: Atomic(0)) }
        }

        deinit {
            for slot in 0..<Self.slotCount {
                let address = slots[slot].exchange(0, ordering: .acquiring)
                if let pointer = UnsafeRawPointer(bitPattern: address) {
                    Unmanaged<CompressionState>.fromOpaque(pointer).release()
                }
            }
            slots.deinitialize(count: Self.slotCount)
            slots.deallocate()
        }

        /// A state taken out of a slot, or `nil` when every slot is empty.
        func take() -> CompressionState? {
            for slot in 0..<Self.slotCount {
                let address = slots[slot].exchange(0, ordering: .acquiring)
                if let pointer = UnsafeRawPointer(bitPattern: address) {
                    return Unmanaged<CompressionState>.fromOpaque(pointer).takeRetainedValue()
                }
            }
            return nil
        }

        /// Puts `state` in an empty slot, or lets it go when there is none.
        func put(_ state: CompressionState) {
            let address = UInt(bitPattern: Unmanaged.passRetained(state).toOpaque())
            for slot in 0..<Self.slotCount
            where slots[slot].compareExchange(expected: 0, desired: address, ordering: .releasing).exchanged {
                return
            }
            Unmanaged<CompressionState>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).release()
        }
    }

    /// One liblz4 compression state and the scratch buffer it compresses into, used by one
    /// thread at a time (it is taken out of ``states`` while in use).
    private final class CompressionState: @unchecked Sendable {
        /// The liblz4 compression state (`LZ4_sizeofState()` bytes), initialized by each call.
        private let state: UnsafeMutableRawPointer
        /// Where a block is compressed to before it is copied out.
        private(set) var scratch: UnsafeMutableRawPointer
        /// The scratch buffer's size in bytes.
        private var scratchSize: Int

        init() {
            state = .allocate(byteCount: Int(LZ4_sizeofState()), alignment: 16)
            scratchSize = 64 * 1024
            scratch = .allocate(byteCount: scratchSize, alignment: 16)
        }

        deinit {
            state.deallocate()
            scratch.deallocate()
        }

        /// Compresses `source` as one independent block into ``scratch`` (grown to liblz4's
        /// bound for the input) and returns the compressed size (`nil` only if liblz4 fails).
        func compress(_ source: UnsafeRawBufferPointer) -> Int? {
            let bound = Int(LZ4_compressBound(Int32(source.count)))
            if scratchSize < bound {
                scratch.deallocate()
                scratchSize = bound
                scratch = .allocate(byteCount: scratchSize, alignment: 16)
            }
            let produced = Int(
                LZ4_compress_fast_extState(
                    state, source.baseAddress!.assumingMemoryBound(to: CChar.self),
                    scratch.assumingMemoryBound(to: CChar.self), Int32(source.count), Int32(bound), 1))
            return produced > 0 ? produced : nil
        }
    }
}
