import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory of decompressed blocks: the bytes a read finds a row in.
///
/// A block of the default size (more than half of ``slotSize``, at most all of it) takes a slot
/// of a slab: 2 MiB chunks, each aligned to 2 MiB and advised for transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`, Linux), 128 slots each. Every other block (a small commit's, one
/// holding a row larger than a block) is allocated on the heap.
///
/// Why: a fault or a fetch reads one row of a block chosen at random from the whole cache, so
/// with 4 KiB pages nearly every such read also missed the TLB, and under a hypervisor (nested
/// paging) the page walk is a long one. `strata-graph-bench` at 1M rows (the cache holding ~180
/// MB of blocks), four alternating runs each way: W5 fetch 14.5k → 17.0k queries/s (medians),
/// W1 +2%, W4 and W6 within their spread; at 100k rows no change.
///
/// A chunk all of whose slots are free is kept for the next blocks while the free chunks kept
/// hold at most ``retainedEmptyChunks`` (by default 256 MiB, a cache of the default size), and
/// unmapped beyond that. Process-wide and `Sendable`: blocks of every store share the chunks, so
/// a store opened again reuses the memory the blocks of the one closed before freed; mapping a
/// chunk anew costs a huge page zeroed by the kernel (W4 at 1M rows, which opens its store
/// three times, was ~8% slower while free chunks were unmapped at once).
final class BlockMemory: Sendable {
    /// The memory of every store's blocks.
    static let shared = BlockMemory()

    /// The size of a slot: the default block size (``StoreConfiguration/blockSize``).
    static let slotSize = 16 << 10
    /// The size and alignment of a chunk: one huge page.
    static let chunkSize = 2 << 20
    /// The slots of a chunk.
    static let slotsPerChunk = chunkSize / slotSize

    /// One mapped chunk.
    private struct Chunk {
        /// A bit set for each free slot (``slotsPerChunk`` bits).
        var free: (UInt64, UInt64) = (.max, .max)
        /// The number of free slots.
        var freeCount = BlockMemory.slotsPerChunk
        /// Whether the chunk is in ``State/open``.
        var isOpen = true
    }

    /// How many chunks all of whose slots are free are kept mapped.
    let retainedEmptyChunks: Int

    /// The chunks, guarded by ``state``.
    private struct State {
        /// The chunks by base address.
        var chunks: [UInt: Chunk] = [:]
        /// Chunks that may have a free slot (a full one is dropped when met), most recently
        /// freed into last.
        var open: [UInt] = []
        /// The number of chunks all of whose slots are free.
        var emptyCount = 0
    }

    private let state = Mutex(State())

    /// A memory that keeps up to `retainedEmptyChunks` free chunks mapped (256 MiB by default).
    init(retainedEmptyChunks: Int = 128) {
        self.retainedEmptyChunks = retainedEmptyChunks
    }

    deinit {
        // Blocks take the shared memory's slots, which is never freed; a memory of its own (a
        // test's) has had its slots freed by now.
        for base in state.withLock({ Array($0.chunks.keys) }) { Self.unmap(base) }
    }

    /// Uninitialized memory for `count` bytes of a block: a slot when `count` fits one and fills
    /// more than half of it, else heap memory. Free it with ``release(_:)``.
    func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if Self.takesSlot(count), let slot = takeSlot() {
            return UnsafeMutableRawBufferPointer(start: slot, count: count)
        }
        return .allocate(byteCount: Swift.max(count, 1), alignment: 16)
    }

    /// Memory from ``allocate(_:)`` holding a copy of `source`.
    func copy(of source: UnsafeRawBufferPointer) -> UnsafeMutableRawBufferPointer {
        let memory = allocate(source.count)
        if let start = source.baseAddress { memory.baseAddress!.copyMemory(from: start, byteCount: source.count) }
        return memory
    }

    /// Whether a block of `count` bytes takes a slot: it fits one and fills more than half of it.
    static func takesSlot(_ count: Int) -> Bool {
        count > slotSize / 2 && count <= slotSize
    }

    /// The bytes a block of `count` bytes takes: a slot's size when it takes one, else its own.
    static func footprint(ofBlockBytes count: Int) -> Int {
        takesSlot(count) ? slotSize : count
    }

    /// Frees `memory`, which ``allocate(_:)`` returned.
    func release(_ memory: UnsafeMutableRawBufferPointer) {
        guard let address = memory.baseAddress else { return }
        // A block of another size (a small commit's, most often) never took a slot: freed
        // without taking the lock.
        guard Self.takesSlot(memory.count) else {
            memory.deallocate()
            return
        }
        let base = UInt(bitPattern: address) & ~UInt(Self.chunkSize - 1)
        let outcome = state.withLock { state -> Release in
            // Heap memory (a slot-sized block when no chunk could be mapped) never lies in a
            // chunk: the chunks are mapped apart from the heap.
            guard var chunk = state.chunks[base] else { return .heap }
            let slot = Int(UInt(bitPattern: address) - base) / Self.slotSize
            if slot < 64 { chunk.free.0 |= 1 << UInt64(slot) } else { chunk.free.1 |= 1 << UInt64(slot - 64) }
            chunk.freeCount += 1
            if !chunk.isOpen {
                chunk.isOpen = true
                state.open.append(base)
            }
            if chunk.freeCount == Self.slotsPerChunk {
                guard state.emptyCount < retainedEmptyChunks else {
                    state.chunks[base] = nil
                    state.open.removeAll { $0 == base }
                    return .unmapChunk
                }
                state.emptyCount += 1
            }
            state.chunks[base] = chunk
            return .slot
        }
        switch outcome {
        case .heap: memory.deallocate()
        case .slot: break
        case .unmapChunk: Self.unmap(base)
        }
    }

    /// What freeing a block's memory did.
    private enum Release {
        /// It was heap memory, to be deallocated.
        case heap
        /// Its slot is free again.
        case slot
        /// Its slot was the last one in use of a chunk, and as many free chunks as are kept
        /// already are: the chunk is to be unmapped.
        case unmapChunk
    }

    /// The number of chunks mapped.
    var chunkCount: Int { state.withLock { $0.chunks.count } }

    /// A free slot, from a chunk mapped first when none has one; `nil` when no chunk can be mapped.
    private func takeSlot() -> UnsafeMutableRawPointer? {
        let slot: UInt? = state.withLock { state in
            while let base = state.open.last {
                guard var chunk = state.chunks[base], chunk.freeCount > 0 else {
                    state.open.removeLast()
                    state.chunks[base]?.isOpen = false
                    continue
                }
                if chunk.freeCount == Self.slotsPerChunk { state.emptyCount -= 1 }
                let index: Int
                if chunk.free.0 != 0 {
                    index = chunk.free.0.trailingZeroBitCount
                    chunk.free.0 &= chunk.free.0 - 1
                } else {
                    index = 64 + chunk.free.1.trailingZeroBitCount
                    chunk.free.1 &= chunk.free.1 - 1
                }
                chunk.freeCount -= 1
                state.chunks[base] = chunk
                return base + UInt(index * Self.slotSize)
            }
            return nil
        }
        if let slot { return UnsafeMutableRawPointer(bitPattern: slot) }
        guard let base = Self.map() else { return nil }
        state.withLock { state in
            state.chunks[base] = Chunk()
            state.open.append(base)
            state.emptyCount += 1
        }
        return takeSlot()
    }

    /// Maps a chunk aligned to ``chunkSize`` and advises it for huge pages; `nil` when the
    /// system has no memory to map.
    private static func map() -> UInt? {
        #if os(Linux)
        // Twice the size, then the parts before and after the aligned chunk unmapped.
        guard let raw = mmap(nil, 2 * chunkSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else {
            return nil
        }
        let start = UInt(bitPattern: raw)
        let base = (start + UInt(chunkSize) - 1) & ~UInt(chunkSize - 1)
        if base > start { munmap(raw, Int(base - start)) }
        let end = start + UInt(2 * chunkSize)
        if end > base + UInt(chunkSize) { munmap(UnsafeMutableRawPointer(bitPattern: base + UInt(chunkSize)), Int(end - base) - chunkSize) }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: base), chunkSize, MADV_HUGEPAGE)
        return base
        #else
        // Huge pages by advice are Linux's: elsewhere every block is on the heap.
        return nil
        #endif
    }

    /// Unmaps the chunk at `base`.
    private static func unmap(_ base: UInt) {
        #if os(Linux)
        munmap(UnsafeMutableRawPointer(bitPattern: base), chunkSize)
        #endif
    }
}
