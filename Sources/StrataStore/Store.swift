import Dispatch
import Foundation
import Logging
import StrataSynchronization
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open Strata store: a directory holding a segmented, LZ4-compressed, append-only log of
/// transactions, with an in-memory object index, fetch indexes, history and compaction.
///
/// `Store` is `Sendable`: any number of threads may read, scan and commit at once. Commits from
/// many threads are grouped into one write and one `fdatasync`.
public final class Store: Sendable {
    /// The on-disk format version this build reads and writes.
    public static let formatVersion: UInt32 = 1

    /// The store directory's path.
    public let path: String
    /// The schema the store holds.
    public let schema: Schema
    /// The store's UUID.
    public let storeID: UUID
    /// The configuration it was opened with.
    public let configuration: StoreConfiguration

    let io: any FileIO
    let logger: Logger
    let codecs: [RowCodec]
    /// Per entity, the columns with a fetch index, in order: the positions of a commit's
    /// ``IndexedValues``.
    let indexedColumns: [[Int]]
    /// How rows written under earlier versions of the schema are read.
    let schemaHistory: SchemaHistory
    /// The codecs of every schema version, by version then entity (the last are ``codecs``).
    let versionCodecs: [[RowCodec]]
    /// The formats of ``EncodedRow``s, by version then entity, as ``versionCodecs``.
    let versionFormats: [[EncodedRowFormat]]
    let segmentsPath: String
    let checkpointsPath: String
    let state: LockedState
    let cache: LRUCache<DecodedBlock>
    let nextKeys: Lock<[Int64]>
    /// See ``keySource``.
    let keySourceSlot = Lock<(any KeySource)?>(nil)
    let commitQueue = Lock(CommitQueue())
    let manifestLock = Lock(ManifestStatus())
    let compactionLock = Lock(())
    /// Held while a commit group is written and applied, and while `compact()` rolls the active
    /// segment, so that a roll never runs between a group's append and its update of the log end.
    let appendLock = Lock(())
    /// The rows the recent commits wrote, for checking commit conditions (under `appendLock`).
    let recentCommits = Lock(RecentCommits())
    /// The checkpoint's fetch-index sections until something needs the indexes; held while
    /// ``loadPendingFetchIndexes()`` parses them.
    let pendingFetchIndexes = Lock<[FetchIndexSection]?>(nil)
    /// Whether ``pendingFetchIndexes`` may hold sections: the check each commit makes without
    /// taking the lock.
    let fetchIndexesPending = Atomic<Bool>(false)
    /// Entered while the block cache is being warmed after opening (``warmBlockCacheInBackground()``).
    let blockCacheWarming = DispatchGroup()
    /// Raised when the store closes or is released: the warm-up stops at its next block.
    let blockCacheWarmUpStop = Flag()
    let lifecycle = Lock(Lifecycle())
    let counters = StoreCounters()
    let lockFD: Atomic<Int32>
    let closed = Atomic<Bool>(false)
    /// Whether a commit asked the maintenance thread to allocate segment space ahead of the log
    /// (``allocateSpaceAhead()``) and it has not started yet.
    let spaceAheadRequested = Atomic<Bool>(false)
    /// Entered while the maintenance thread allocates segment space ahead of the log outside the
    /// append lock (``allocateSpaceAhead()``): what changes the active segment's size or starts a
    /// new one waits for it first.
    let spaceAllocating = DispatchGroup()
    /// Whether a commit asked the maintenance thread to merge the pending fetch-index changes.
    let indexMergeRequested = Atomic<Bool>(false)
    let maintenance: MaintenanceThread

    init(
        path: String, schema: Schema, storeID: UUID, configuration: StoreConfiguration, state: StoreState,
        nextKeys: [Int64], manifest: ManifestStatus, lockFD: Int32, schemaHistory: SchemaHistory = SchemaHistory()
    ) {
        self.path = path
        self.schema = schema
        self.storeID = storeID
        self.configuration = configuration
        self.io = configuration.io
        self.logger = configuration.logger
        self.schemaHistory = schemaHistory
        self.versionCodecs = schemaHistory.codecs(for: schema)
        self.codecs = versionCodecs[schemaHistory.version]
        indexedColumns = schema.entities.map(\.indexedColumns)
        self.versionFormats = versionCodecs.map { $0.map(EncodedRowFormat.init) }
        self.segmentsPath = path + "/segments"
        self.checkpointsPath = path + "/checkpoints"
        self.state = LockedState(state)
        self.cache = LRUCache(capacity: configuration.cacheSize)
        self.nextKeys = Lock(nextKeys)
        self.manifestLock.withLock { $0 = manifest }
        self.lockFD = Atomic(lockFD)
        self.maintenance = MaintenanceThread()
    }

    deinit {
        blockCacheWarmUpStop.raise()
        // Else the maintenance thread of a store released without close() would wake every
        // second for the rest of the process, with no store to maintain.
        maintenance.requestStop()
        releaseLock()
    }

    /// Closes the lock file, letting another writer open the store.
    private func releaseLock() {
        let fd = lockFD.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 {
            io.unlock(fd)
            io.close(fd)
        }
    }

    /// Opens the store at `url`, creating it when it does not exist (unless configured not to).
    ///
    /// Opening reads the manifest, loads the newest index checkpoint and replays the log after
    /// it; a torn tail of the active segment is truncated and logged.
    ///
    /// - Parameters:
    ///   - url: the store directory (by convention `Name.strata`).
    ///   - schema: the schema to use; `nil` opens an existing store with the schema it holds.
    ///   - configuration: durability, sizes and maintenance settings.
    /// - Returns: the open store.
    /// - Throws: ``StoreError`` with code `locked` when another writer has it open,
    ///   `schemaMismatch` when `schema` differs from the stored one, `corrupt` (naming file and
    ///   offset) for a damaged log, `notFound`, `unsupportedFormat`, `io` or `diskFull`;
    ///   `invalidConfiguration` (before the directory is touched) when a setting of
    ///   `configuration` is out of range (``StoreConfiguration/validate()``).
    public static func open(
        at url: URL, schema: Schema?, configuration: StoreConfiguration = StoreConfiguration()
    ) throws -> Store {
        try Recovery(path: url.path, schema: schema, configuration: configuration).open()
    }

    /// Reserves `count` consecutive primary keys for new rows of `entity`.
    ///
    /// Keys are positive, increase monotonically and are never handed out twice, even across
    /// crashes. Costs no I/O. A ``keySource`` hands them out first when it has them.
    public func allocateKeys(for entity: Int, count: Int = 1) -> ClosedRange<PrimaryKey> {
        precondition(count > 0 && schema.entities.indices.contains(entity), "invalid entity or count")
        let source = keySource
        return nextKeys.withLock { keys in
            if let range = source?.allocateKeys(for: entity, count: count, next: keys[entity]) {
                keys[entity] = max(keys[entity], range.upperBound + 1)
                return range
            }
            let first = keys[entity]
            keys[entity] += Int64(count)
            return first...(first + Int64(count) - 1)
        }
    }

    /// Reads the row of `entity` at `key`.
    ///
    /// Costs at most one `pread` and one block decompression; nothing when the block is cached.
    ///
    /// - Returns: the row, or `nil` when there is no live row at `key`.
    /// - Throws: ``StoreError`` `corrupt` when the block fails its checksum, `io` when the read fails.
    public func read(_ entity: Int, key: PrimaryKey) throws -> Row? {
        try checkOpen()
        guard let resolved = try state.withLock({ try $0.resolve(entity, key) }) else { return nil }
        try checkBlockEntity(resolved.block, of: entity, file: resolved.file)
        return try readRow(resolved)
    }

    /// Checks that `place`, a block the object index of `entity` points into, holds rows of
    /// `entity`: a damaged checkpoint can point elsewhere, and the rows of another entity have
    /// other columns than the caller's.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the segment and the block's offset.
    func checkBlockEntity(_ place: BlockLocation, of entity: Int, file: SegmentFile) throws {
        guard Int(place.entity) == entity else {
            throw StoreError(
                .corrupt, "the index of entity \(entity) points into a block of entity \(place.entity)",
                path: file.path, offset: Int64(place.offset))
        }
    }

    /// Whether `entity` has a live row at `key`.
    ///
    /// Costs no I/O, but the first lookup in a page of 4,096 keys of an index opened from a
    /// checkpoint, which reads and decodes the page (48 KiB decoded, a few KiB in the file).
    ///
    /// - Throws: ``StoreError`` `corrupt` when that page fails its checksum, `io` when its read fails.
    public func contains(_ entity: Int, key: PrimaryKey) throws -> Bool {
        try state.withLock { state in
            guard state.entities.indices.contains(entity) else { return false }
            return try state.entities[entity].location(of: key).isPresent
        }
    }

    /// The number of live rows of `entity`. Costs no I/O.
    public func count(_ entity: Int) -> Int {
        state.withLock { $0.entities[entity].liveCount }
    }

    /// The newest committed sequence number (0 for an empty store). Read without the state's
    /// lock (``LockedState/lastSequence``).
    public var lastSequence: UInt64 {
        state.lastSequence
    }

    /// Decodes the row at a resolved location.
    func readRow(_ resolved: ResolvedRow) throws -> Row {
        let block = try loadBlock(resolved.location.block, resolved.block, file: resolved.file)
        return try decodeRow(
            block, slot: resolved.location.slot, entity: Int(resolved.block.entity), file: resolved.file,
            offset: Int64(resolved.block.offset))
    }

    /// Decodes the row in `slot` of a decoded block; `offset` is the block's in `file`, for errors.
    func decodeRow(_ block: DecodedBlock, slot: Int, entity: Int, file: SegmentFile, offset: Int64) throws -> Row {
        guard slot < block.rowCount else {
            throw StoreError(
                .corrupt, "row slot \(slot) is past the block's \(block.rowCount) rows", path: file.path, offset: offset
            )
        }
        do {
            let codec = try codec(entity, of: block)
            return try block.withRow(at: slot) { try codec.decode($0) }
        } catch {
            throw StoreError(.corrupt, "row \(slot) of a block does not decode", path: file.path, offset: offset)
        }
    }

    /// The codec of the rows of `entity` in `block`, by the schema version they were written under.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the block names a version the store does not have.
    func codec(_ entity: Int, of block: DecodedBlock) throws -> RowCodec {
        let version = Int(block.schemaVersion)
        guard version < versionCodecs.count, entity < codecs.count else { throw BinaryReader.Malformed(offset: 13) }
        return versionCodecs[version][entity]
    }

    /// Decodes the block at `span` of a record whose bytes start at `recordStart` of `bytes` and
    /// at `recordOffset` of the file at `path` (read by replay, history and compaction).
    static func decodeBlock(
        _ span: BlockSpan, in bytes: [UInt8], recordStart: Int = 0, path: String, recordOffset: Int64
    ) throws -> DecodedBlock {
        let start = recordStart + span.offset
        do {
            return try bytes.withUnsafeBytes {
                try DecodedBlock(onDisk: UnsafeRawBufferPointer(rebasing: $0[start..<(start + span.length)]))
            }
        } catch {
            let within = (error as? BinaryReader.Malformed)?.offset ?? 0
            throw StoreError(
                .corrupt, "block fails its checksum or does not decode", path: path,
                offset: recordOffset + Int64(span.offset + within))
        }
    }

    /// The block numbered `number` if the cache holds it, decoded (a hit counts as a use).
    func cachedBlock(_ number: UInt32, prefetchingRowAt start: Int? = nil) -> DecodedBlock? {
        cache.value(forKey: UInt64(number), prefetching: start)
    }

    /// Returns a decoded block, from the cache or with one `pread` and one decompression.
    ///
    /// - Parameter caching: cache the block as recently used (evicting others if need be);
    ///   otherwise it is cached only into room the cache has free, as least recently used.
    func loadBlock(
        _ number: UInt32, _ location: BlockLocation, file: SegmentFile, caching: Bool = true,
        prefetchingRowAt start: Int? = nil
    ) throws -> DecodedBlock {
        if let cached = cachedBlock(number, prefetchingRowAt: start) { return cached }
        let block = try Self.readBlock(location, file: file)
        if caching {
            cache.insert(block, forKey: UInt64(number), cost: block.cost, readAt: block.rowDataAddress)
        } else {
            cache.insertIfRoom(block, forKey: UInt64(number), cost: block.cost, readAt: block.rowDataAddress)
        }
        return block
    }

    /// Reads the block at `location` of `file` with one `pread` and decodes it, bypassing the cache.
    ///
    /// - Throws: ``StoreError`` `corrupt` when the block is cut short, fails its checksum, does
    ///   not decode or holds rows of another entity than the block table says (a damaged
    ///   checkpoint), `io` when the read fails.
    static func readBlock(_ location: BlockLocation, file: SegmentFile) throws -> DecodedBlock {
        let bytes = try file.read(at: Int64(location.offset), count: Int(location.length))
        guard bytes.count == Int(location.length) else {
            throw StoreError(.corrupt, "block is cut short", path: file.path, offset: Int64(location.offset))
        }
        let block: DecodedBlock
        do {
            block = try bytes.withUnsafeBytes { try DecodedBlock(onDisk: $0) }
        } catch let error as BinaryReader.Malformed {
            throw StoreError(
                .corrupt, "block fails its checksum or does not decode", path: file.path,
                offset: Int64(location.offset) + Int64(error.offset))
        }
        guard block.entity == Int(location.entity) else {
            throw StoreError(
                .corrupt,
                "block holds rows of entity \(block.entity), not of entity \(location.entity) as the index says",
                path: file.path, offset: Int64(location.offset))
        }
        return block
    }

    /// Checks the store is open (and writable when `writing`).
    func checkOpen(writing: Bool = false) throws {
        if closed.load(ordering: .acquiring) { throw StoreError(.closed, "the store is closed", path: path) }
        guard writing else { return }
        try lifecycle.withLock { life in
            if configuration.readOnly { throw StoreError(.readOnly, "the store was opened read-only", path: path) }
            if let failure = life.failure {
                throw StoreError(.failStopped, "an earlier fsync failed; reopen the store (\(failure))", path: path)
            }
        }
    }

    /// Closes the store: stops maintenance, waits for the block cache's warm-up to stop, syncs
    /// the log, writes a checkpoint and releases the lock.
    ///
    /// Calling it twice is harmless. A store that is not closed is recovered on the next open.
    ///
    /// - Throws: ``StoreError`` when the final sync or checkpoint fails; the log is still intact.
    public func close() throws {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        maintenance.stop()
        // The block cache may be warming on its thread: a closed store leaves no work running.
        // The warm-up stops at its next block once its stop flag is raised.
        blockCacheWarmUpStop.raise()
        blockCacheWarming.wait()
        CommitSignal.close(self)
        while commitQueue.withLock({ $0.leaderActive }) { usleep(100) }
        defer {
            state.withLock { $0.files.removeAll() }
            releaseLock()
        }
        guard !configuration.readOnly else { return }
        let failed = lifecycle.withLock { $0.failure != nil }
        if !failed {
            try sealActiveSegment()
            let damaged = state.withLock { $0.checkpointFile?.isDamaged ?? false }
            if state.withLock({ $0.bytesSinceCheckpoint }) > 0 && !damaged {
                try writeCheckpoint()
            } else {
                // Keys allocated since the last checkpoint must not be handed out again after
                // reopening; a damaged checkpoint is no longer named.
                try manifestLock.withLock { status in
                    _ = dropDamagedCheckpoint(&status)
                    try publishManifest(status, unlessUnchanged: true)
                }
            }
        }
        logger.debug("closed store", metadata: ["path": "\(path)"])
    }

    /// `fdatasync` of the active segment.
    func syncActiveSegment() throws {
        let file = state.withLock { $0.activeFile }
        try StoreError.io("sync segment", path: file.path) { try io.fdatasync(file.fd) }
        counters.fsyncs.add(1)
    }
}

/// Whether a failed fsync stopped the store.
struct Lifecycle: Sendable {
    /// Why writes are refused until reopening, after a failed fsync.
    var failure: String?
}

/// The store's in-memory state behind its lock, in an object of its own so that background
/// work can hold the state without holding the store (whose release closes the store's files).
final class LockedState: Sendable {
    private let mutex: Lock<StoreState>
    /// ``StoreState/lastSequence`` as the last holder of the lock left it, stored before the lock
    /// is released.
    private let publishedSequence: Atomic<UInt64>

    /// Wraps `state`.
    init(_ state: StoreState) {
        mutex = Lock(state)
        publishedSequence = Atomic(state.lastSequence)
    }

    /// The newest committed sequence, read without the lock. Every save reads it before its
    /// checks (twice: the context's ``CommitCondition`` and the engine's encoding) while the
    /// group-commit leader takes the lock several times a group: with the lock, those reads
    /// were most of the lock's contended waits (`perf` of W2 with two writers). The value is
    /// never newer than the state a later `withLock` sees: it is stored inside the lock, and
    /// loaded with acquiring ordering.
    var lastSequence: UInt64 {
        publishedSequence.load(ordering: .acquiring)
    }

    /// Runs `body` with the state locked.
    func withLock<R>(_ body: (inout StoreState) throws -> R) rethrows -> R {
        try mutex.withLock { state in
            defer {
                // Written only when it moved: readers' lock sections leave the line shared.
                if publishedSequence.load(ordering: .relaxed) != state.lastSequence {
                    publishedSequence.store(state.lastSequence, ordering: .releasing)
                }
            }
            return try body(&state)
        }
    }
}
