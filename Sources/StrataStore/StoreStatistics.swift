import Metrics
import Synchronization

/// A counter kept both as an atomic (for ``StoreStatistics``) and as a swift-metrics `Counter`.
final class StoreCounter: Sendable {
    private let value = Atomic<Int>(0)
    private let metric: Counter

    /// Creates the counter reported to swift-metrics under `label`.
    init(_ label: String) { metric = Counter(label: label) }

    /// Adds `amount`.
    func add(_ amount: Int) {
        value.add(amount, ordering: .relaxed)
        metric.increment(by: amount)
    }

    /// The current total.
    var total: Int { value.load(ordering: .relaxed) }
}

/// The store's counters, also reported through swift-metrics as `strata_*`.
final class StoreCounters: Sendable {
    /// Commits written.
    let commits = StoreCounter("strata_commits")
    /// `fsync`/`fdatasync` calls on the log.
    let fsyncs = StoreCounter("strata_fsyncs")
    /// Log appends of commit groups: one write for every group of concurrent commits.
    let groupWrites = StoreCounter("strata_group_writes")
    /// Log bytes appended by commits.
    let bytesWritten = StoreCounter("strata_bytes_written")
    /// Bytes of segment files removed by compaction, less what it wrote.
    let bytesReclaimed = StoreCounter("strata_bytes_reclaimed")
    /// Compactions finished.
    let compactions = StoreCounter("strata_compactions")
    /// Checkpoints written.
    let checkpoints = StoreCounter("strata_checkpoints")
    /// Windows of segment space a commit group allocated before its append.
    let spaceAllocations = StoreCounter("strata_space_allocations")
    /// Windows of segment space the maintenance thread allocated ahead of the log.
    let spaceAllocationsAhead = StoreCounter("strata_space_allocations_ahead")
}

/// A snapshot of the store's counters and sizes. `Sendable`.
public struct StoreStatistics: Sendable, Hashable, Codable {
    /// Commits written since open.
    public var commits: Int
    /// `fsync`/`fdatasync` calls on the log since open (commits and segment rolls). Fewer than
    /// ``commits`` when concurrent durable commits shared a sync (group commit).
    public var fsyncs: Int
    /// Groups of commits written since open, each with one append (and, when durable, one
    /// `fdatasync`); ``commits`` divided by this is the mean number of transactions per group.
    public var commitGroups: Int
    /// Log bytes appended by commits since open.
    public var bytesWritten: Int
    /// Bytes reclaimed by compaction since open.
    public var bytesReclaimed: Int
    /// Block-cache hits since open.
    public var cacheHits: Int
    /// Block-cache misses since open.
    public var cacheMisses: Int
    /// Compactions since open.
    public var compactions: Int
    /// Checkpoints written since open.
    public var checkpoints: Int
    /// Windows of active-segment space (allocated and written with zeros, see
    /// ``Store/preallocationWindow``) that a commit group allocated before its append since
    /// open: each delays that group by the zeros' write.
    public var spaceAllocations: Int
    /// Windows of active-segment space the maintenance thread allocated ahead of the log since
    /// open, so that no commit waits for them.
    public var spaceAllocationsAhead: Int
    /// Live rows, all entities.
    public var liveRows: Int
    /// Bytes of memory the object index and block table take now. After an open from a
    /// checkpoint their pages are read as keys and blocks in them are used, so this grows with use
    /// up to ``indexBytesWhenRead``.
    public var indexBytes: Int
    /// Bytes of memory the object index and block table take once every page of both is read:
    /// 12 bytes a key up to the largest key, in pages of 4,096 keys, and 16 bytes a block number
    /// in pages of 4,096 numbers.
    public var indexBytesWhenRead: Int
    /// Bytes of memory the fetch indexes take (an entry of a value and a key a row and indexed
    /// column: about 16 bytes in an index of integers or to-one references, 32 in others, not
    /// counting strings or data too long to be held inline). Reading the statistics right after an open parses the checkpoint's fetch
    /// indexes, which the open leaves for their first use, so that this is what a store in use
    /// holds.
    public var fetchIndexBytes: Int
    /// Bytes of decoded blocks the block cache holds now, at most
    /// ``StoreConfiguration/cacheSize``.
    public var cacheBytes: Int
    /// Blocks of live segments in the block table.
    public var blocks: Int
    /// Bytes of live segment files.
    public var segmentBytes: Int64
    /// Uncompressed bytes of the live rows' encodings; with ``segmentBytes`` it gives the
    /// compression ratio of a store without dead rows.
    public var liveRowBytes: Int64
}

/// One live segment, as ``Store/segments()`` reports it. `Sendable`.
public struct SegmentInfo: Sendable, Hashable, Codable {
    /// The segment id (its file is `segments/<id>.log`).
    public var id: UInt32
    /// The file's size in bytes.
    public var fileBytes: Int64
    /// Encoded bytes of live rows.
    public var liveBytes: Int64
    /// Encoded bytes of superseded or deleted rows.
    public var deadBytes: Int64
    /// Whether this is the active segment taking appends.
    public var isActive: Bool

    /// The segment's file name in the store's `segments` directory, such as `00000001.log`.
    public var fileName: String { SegmentFile.fileName(id) }
}

extension Store {
    /// The store's counters and sizes now. Right after an open it parses the checkpoint's fetch
    /// indexes (``StoreStatistics/fetchIndexBytes``); otherwise it costs no I/O.
    public var statistics: StoreStatistics {
        loadPendingFetchIndexes()
        let sizes = state.withLock { state in
            let blockTable = state.blocks.allocatedBytes
            return (
                state.entities.reduce(0) { $0 + $1.liveCount },
                state.entities.reduce(0) { $0 + $1.memoryBytes } + blockTable,
                state.entities.reduce(0) { $0 + $1.fullMemoryBytes } + state.blocks.allocatedBytesWhenRead,
                state.fetchIndexMemoryBytes,
                // The pages not read yet hold blocks of live segments only: they are read before
                // compaction deletes any.
                state.blocks.pendingBlockCount
                    + state.blocks.stored.occupiedRanges.joined().count {
                        state.stats[state.blocks.stored[$0].segment] != nil
                    },
                state.stats.values.reduce(Int64(0)) { $0 + $1.fileBytes },
                state.stats.values.reduce(Int64(0)) { $0 + $1.liveBytes }
            )
        }
        let (rows, indexBytes, indexBytesWhenRead, fetchIndexBytes, blocks, segmentBytes, liveRowBytes) = sizes
        return StoreStatistics(
            commits: counters.commits.total, fsyncs: counters.fsyncs.total, commitGroups: counters.groupWrites.total,
            bytesWritten: counters.bytesWritten.total,
            bytesReclaimed: counters.bytesReclaimed.total, cacheHits: cache.hits, cacheMisses: cache.misses,
            compactions: counters.compactions.total, checkpoints: counters.checkpoints.total,
            spaceAllocations: counters.spaceAllocations.total,
            spaceAllocationsAhead: counters.spaceAllocationsAhead.total, liveRows: rows,
            indexBytes: indexBytes, indexBytesWhenRead: indexBytesWhenRead, fetchIndexBytes: fetchIndexBytes,
            cacheBytes: cache.totalCost, blocks: blocks, segmentBytes: segmentBytes, liveRowBytes: liveRowBytes)
    }

    /// The file name of the index checkpoint the store was opened with or wrote last, in its
    /// `checkpoints` directory, or `nil` when there is none. Costs no I/O.
    public var checkpointFileName: String? {
        manifestLock.withLock { $0.checkpoint.map(Checkpoint.fileName) }
    }

    /// The live segments in log order with their byte counts. Costs no I/O.
    public func segments() -> [SegmentInfo] {
        state.withLock { state in
            state.segmentOrder.map { id in
                let stats = state.stats[id] ?? SegmentStats()
                return SegmentInfo(
                    id: id, fileBytes: stats.fileBytes, liveBytes: stats.liveBytes, deadBytes: stats.deadBytes,
                    isActive: id == state.activeSegment)
            }
        }
    }
}
