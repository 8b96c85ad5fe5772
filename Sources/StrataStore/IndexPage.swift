import Synchronization
import StrataSynchronization

/// 4,096 consecutive keys of one entity's object index: their row locations and encoded sizes,
/// 48 KiB.
///
/// A page a commit creates is zeroed and ready. A page of an opened checkpoint holds no memory
/// until a key in it is first looked up: then it is read from the checkpoint file with one
/// `pread`, and its checksum and block numbers are verified (``load()``). So opening a store reads
/// no per-object state, and an index larger than memory is read only where it is used.
///
/// Pages are shared between copies of an ``EntityIndex`` (a checkpoint's snapshot, a scan) and
/// copied before a write when shared. A page whose keys all lost their rows is replaced by
/// ``vacant``, and a checkpoint's page found empty when loaded keeps no memory of its own (both
/// read the one zeroed page every index shares), so that an index takes memory for the pages of
/// live rows, not for every key ever used.
final class IndexPage: @unchecked Sendable {
    // @unchecked because of `storage`, raw memory written in two cases only: while the page loads,
    // under `pending`'s lock and before `loaded` is set with release ordering (readers check it
    // with acquire ordering first, so they never see the memory before it is filled); and by
    // `EntityIndex.set`, which writes only into a page it holds uniquely and that does not read
    // the shared empty memory (copying it otherwise), under the lock of the store's state. Raw
    // memory, not arrays: a lookup is on every fault's path, and it costs one atomic load and one
    // indexed read.

    /// How many bits of a key select its slot within a page.
    static let shift = 12
    /// Keys per page.
    static let capacity = 1 << shift
    /// Bytes per page: 8 for each location, then 4 for each size.
    static let byteCount = capacity * 12

    /// Locations (``capacity`` `UInt64`s), then sizes (``capacity`` `UInt32`s); `nil` until a
    /// checkpoint's page is loaded.
    private var storage: UnsafeMutableRawPointer?
    /// Whether ``storage`` holds the page.
    private let loaded: Atomic<Bool>
    /// Where a checkpoint's page is read from until it is loaded; `nil` once it is.
    private let pending: Lock<CheckpointPage?>
    /// How many of the page's keys have a row; written with ``storage`` and under its rules.
    private(set) var liveCount = 0

    /// The zeroed memory every page without rows reads: allocated once, never written or freed.
    // nonisolated(unsafe): a pointer is not Sendable; the memory is only ever read after the
    // initializer (run once) zeroes it.
    nonisolated(unsafe) private static let emptyMemory: UnsafeMutableRawPointer = {
        let memory = allocate()
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        return memory
    }()

    /// The page that stands for every page whose keys have no row, reading ``emptyMemory``.
    static let vacant = IndexPage(reading: emptyMemory)

    /// Whether the page reads the shared empty memory, which a write must not change
    /// (``EntityIndex/set(_:to:size:)`` writes into a copy).
    var isVacant: Bool { loaded.load(ordering: .acquiring) && storage == Self.emptyMemory }

    /// A zeroed page: no key in it has a row.
    init() {
        let memory = Self.allocate()
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: Self.byteCount)
        storage = memory
        loaded = Atomic(true)
        pending = Lock(nil)
    }

    /// A page of a checkpoint, read on first use.
    init(_ source: CheckpointPage) {
        storage = nil
        loaded = Atomic(false)
        pending = Lock(source)
    }

    /// A loaded page over `memory`, which it does not own (``vacant``).
    private init(reading memory: UnsafeMutableRawPointer) {
        storage = memory
        loaded = Atomic(true)
        pending = Lock(nil)
    }

    /// A copy of a loaded page, for a write to a shared one.
    private init(copying page: UnsafeMutableRawPointer, liveCount: Int) {
        let memory = Self.allocate()
        memory.copyMemory(from: page, byteCount: Self.byteCount)
        storage = memory
        loaded = Atomic(true)
        pending = Lock(nil)
        self.liveCount = liveCount
    }

    deinit {
        if let storage, storage != Self.emptyMemory { storage.deallocate() }
    }

    private static func allocate() -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 8)
    }

    /// The page's memory, loading it from its checkpoint first if it is not yet.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the checkpoint and the page's offset when the
    ///   page fails its checksum or names a block the checkpoint does not have; `io` when the
    ///   read fails.
    @inline(__always)
    private func memory() throws -> UnsafeMutableRawPointer {
        if loaded.load(ordering: .acquiring), let storage { return storage }
        return try load()
    }

    /// Reads and verifies the page (once, whichever thread comes first).
    private func load() throws -> UnsafeMutableRawPointer {
        try pending.withLock { source in
            if let storage, loaded.load(ordering: .acquiring) { return storage }
            guard let page = source else { preconditionFailure("an index page is neither loaded nor loadable") }
            let memory = Self.allocate()
            do {
                try page.read(into: UnsafeMutableRawBufferPointer(start: memory, count: Self.byteCount))
            } catch {
                memory.deallocate()
                throw error
            }
            liveCount = (0..<Self.capacity).count { memory.load(fromByteOffset: $0 &* 8, as: UInt64.self) != 0 }
            if liveCount == 0 {
                memory.deallocate()
                storage = Self.emptyMemory
            } else {
                storage = memory
            }
            source = nil
            loaded.store(true, ordering: .releasing)
            return storage!
        }
    }

    /// The location of the key in `slot`.
    @inline(__always)
    func location(_ slot: Int) throws -> UInt64 {
        try memory().load(fromByteOffset: slot &* 8, as: UInt64.self)
    }

    /// The encoded size of the row of the key in `slot`.
    @inline(__always)
    func size(_ slot: Int) throws -> UInt32 {
        try memory().load(fromByteOffset: Self.capacity * 8 + slot &* 4, as: UInt32.self)
    }

    /// Loads the page if it is a checkpoint's not yet read.
    ///
    /// - Throws: as ``location(_:)``.
    func prepare() throws { _ = try memory() }

    /// Sets the location and size of the key in `slot`. Only for a loaded page the caller holds
    /// uniquely (see ``EntityIndex/set(_:to:size:)``).
    func set(_ slot: Int, location: UInt64, size: UInt32) {
        guard let storage, loaded.load(ordering: .acquiring), storage != Self.emptyMemory else {
            preconditionFailure("an index page is written before it is loaded, or is the shared empty page")
        }
        let wasPresent = storage.load(fromByteOffset: slot &* 8, as: UInt64.self) != 0
        if wasPresent != (location != 0) { liveCount += location != 0 ? 1 : -1 }
        storage.storeBytes(of: location, toByteOffset: slot &* 8, as: UInt64.self)
        storage.storeBytes(of: size, toByteOffset: Self.capacity * 8 + slot &* 4, as: UInt32.self)
    }

    /// A loaded copy of the page.
    ///
    /// - Throws: as ``location(_:)``, when the page is a checkpoint's not yet read.
    func copy() throws -> IndexPage {
        let bytes = try memory()
        return IndexPage(copying: bytes, liveCount: liveCount)
    }

    /// Calls `body` with the page's bytes (locations, then sizes), loading it first.
    ///
    /// - Throws: as ``location(_:)``, or what `body` throws.
    func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try body(UnsafeRawBufferPointer(start: try memory(), count: Self.byteCount))
    }

    /// Whether the page's memory is its own (a checkpoint's page before its first use and a page
    /// without rows take none).
    var isResident: Bool { loaded.load(ordering: .acquiring) && storage != Self.emptyMemory }
}
