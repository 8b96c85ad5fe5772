/// Everything the store knows in memory, guarded by one lock: the object index, block table,
/// segments, fetch indexes and history directory.
struct StoreState: Sendable {
    /// Object index per entity.
    var entities: [EntityIndex]
    /// Block table by global block number (``BlockTable``): its memory follows the blocks of live
    /// segments (``dropBlocksOfDeletedSegments()``) and the checkpoint pages read so far.
    var blocks = BlockTable()
    /// Live segments in log order; the last is the active one.
    var segmentOrder: [UInt32] = []
    /// Open segment files by id.
    var files = SegmentFiles()
    /// Byte counts by segment id.
    var stats: [UInt32: SegmentStats] = [:]
    /// The fetch indexes as last merged, per entity, per indexed column: without
    /// ``handedOverIndexChanges`` and ``pendingIndexChanges``. Read through ``fetchIndexes``.
    private var mergedFetchIndexes: [[Int: OrderedIndex]]
    /// The fetch-index changes the maintenance thread is merging outside the lock
    /// (``beginIndexMerge()``), older than ``pendingIndexChanges``; `nil` when none is.
    private var handedOverIndexChanges: FetchIndexChanges?
    /// The fetch-index changes of the small commit groups applied since the indexes were last
    /// merged, in commit order. They wait here, off the commit path, until an index is read or
    /// changed, a checkpoint copies the state, or enough of them gather for the maintenance thread
    /// to merge them (``Store/pendingIndexChangesMerged``).
    private(set) var pendingIndexChanges = FetchIndexChanges()
    /// How many times changes were merged into ``mergedFetchIndexes``: a merge begun outside the
    /// lock is dropped when another merged meanwhile.
    private var indexMerges = 0
    /// Retained history transaction records, by sequence.
    var history = ChunkedArray<HistoryEntry>()
    /// The newest committed sequence.
    var lastSequence: UInt64 = 0
    /// History at or below this sequence is deleted.
    var historyFloor: UInt64 = 0
    /// The floor the application asked for with `deleteHistory(before:)`; ``historyFloor``
    /// stays below the cursors of live history consumers.
    var requestedHistoryFloor: UInt64 = 0
    /// The history consumers, by name.
    var consumers: [String: HistoryConsumerState] = [:]
    /// The end of the log in the active segment.
    var activeEnd: Int64 = Int64(SegmentFile.headerSize)
    /// The end of the space allocated ahead of the log in the active segment.
    var preallocatedEnd: Int64 = 0
    /// Log bytes appended since the newest checkpoint.
    var bytesSinceCheckpoint: Int64 = 0
    /// The checkpoint the store opened from, whose index pages are read when first used; `nil`
    /// once the store wrote a checkpoint of its own (which reads every page).
    var checkpointFile: CheckpointFile?

    /// Creates the empty state for `schema`.
    init(schema: Schema) {
        entities = Array(repeating: EntityIndex(), count: schema.entities.count)
        mergedFetchIndexes = Self.emptyFetchIndexes(schema)
    }

    /// An empty fetch index for each indexed column of each entity of `schema`.
    static func emptyFetchIndexes(_ schema: Schema) -> [[Int: OrderedIndex]] {
        schema.entities.map { entity in
            Dictionary(uniqueKeysWithValues: entity.indexedColumns.map { ($0, OrderedIndex()) })
        }
    }

    /// The active segment's id (a manifest names at least one segment).
    var activeSegment: UInt32 { segmentOrder.last! }

    /// The active segment's file: every segment of ``segmentOrder`` is open.
    var activeFile: SegmentFile { files[activeSegment]! }

    /// The location of a row, with the block's place and file, or `nil` when the row is absent.
    ///
    /// - Throws: as ``EntityIndex/location(of:)``.
    mutating func resolve(_ entity: Int, _ key: Int64) throws -> ResolvedRow? {
        guard entity >= 0, entity < entities.count else { return nil }
        let location = try entities[entity].location(of: key)
        guard location.isPresent else { return nil }
        return try resolve(location)
    }

    /// The block place and file of a row location.
    ///
    /// - Throws: as ``BlockTable/location(_:)``.
    mutating func resolve(_ location: RowLocation) throws -> ResolvedRow? {
        let block = try blocks.location(Int(location.block))
        guard let file = files[block.segment] else { return nil }
        return ResolvedRow(location: location, block: block, file: file)
    }

    /// Frees the block table's chunks whose blocks all lie in segments no longer in the log, which
    /// are never read again; their numbers read as ``BlockLocation/dropped``.
    mutating func dropBlocksOfDeletedSegments() {
        blocks.dropBlocks(outside: Set(segmentOrder))
    }

    /// Appends the blocks of a record written at `offset` of `segment`; returns their numbers.
    mutating func registerBlocks(_ spans: some Collection<BlockSpan>, segment: UInt32, offset: Int64) -> [UInt32] {
        spans.map { span in
            blocks.append(
                BlockLocation(
                    segment: segment, offset: UInt32(offset + Int64(span.offset)), length: UInt32(span.length),
                    entity: UInt16(span.entity)))
        }
    }

    /// Points `key` at `location` (or removes it), moving its bytes between live and dead counts.
    /// The byte counts of `segment`, where the row is written, go to `counts`, for the caller to
    /// add to ``stats`` once; those of the segment of the row replaced, when another, go to ``stats``.
    private mutating func place(
        _ entity: Int, _ key: Int64, at location: RowLocation, size: Int, segment: UInt32,
        counting counts: inout SegmentByteCounts
    ) {
        // Writers prepare every key's page before applying (``EntityIndex/prepare(_:)``).
        let oldSize = (try? entities[entity].size(of: key)) ?? 0
        let previous = entities[entity].set(key, to: location, size: size)
        if previous.isPresent {
            // A block-table page that cannot be read (and is marked damaged) leaves the counts,
            // which only steer compaction, as they are.
            let oldSegment = (try? blocks.location(Int(previous.block)))?.segment
            if oldSegment == segment {
                counts.live -= Int64(oldSize)
                counts.dead += Int64(oldSize)
            } else if let oldSegment {
                stats[oldSegment]?.liveBytes -= Int64(oldSize)
                stats[oldSegment]?.deadBytes += Int64(oldSize)
            }
        }
        if location.isPresent { counts.live += Int64(size) }
    }

    /// Applies a record's operations: object index, byte counts and history (the caller applies
    /// its fetch-index changes: see ``FetchIndexChanges``).
    mutating func apply(_ record: RecordSummary, segment: UInt32, offset: Int64, historyTracking: Bool) {
        let numbers = registerBlocks(record.blocks, segment: segment, offset: offset)
        // Operations are read in place, field by field: a copy of one would retain its changed columns.
        let ops = record.ops
        // The record's own segment's byte counts are summed here and added once.
        var counts = SegmentByteCounts()
        for index in ops.indices {
            // A prior row (history) is never the live image of its key.
            if ops[index].priorBlock >= 0 { counts.dead += Int64(ops[index].priorSize) }
            let (entity, key, block, size) = (ops[index].entity, ops[index].key, ops[index].block, ops[index].size)
            if ops[index].kind.removes {
                place(entity, key, at: .absent, size: 0, segment: segment, counting: &counts)
                if block >= 0 { counts.dead += Int64(size) }
            } else {
                let location = RowLocation(block: numbers[block], slot: ops[index].slot, start: ops[index].start)
                place(entity, key, at: location, size: size, segment: segment, counting: &counts)
            }
        }
        counts.add(to: &stats[segment])
        if let newest = stats[segment]?.maxSequence, newest < record.sequence {
            stats[segment]?.maxSequence = record.sequence
        }
        if record.kind == .transaction {
            lastSequence = Swift.max(lastSequence, record.sequence)
            if !record.cursors.isEmpty { advanceConsumers(record.cursors) }
            if historyTracking && record.sequence > historyFloor {
                history.append(
                    HistoryEntry(
                        sequence: record.sequence, segment: segment, offset: offset, length: record.length,
                        firstBlock: numbers.first))
            }
        }
    }

    /// Fetch indexes: per entity, per indexed column, holding the changes of every commit applied
    /// (those not merged yet are merged first).
    var fetchIndexes: [[Int: OrderedIndex]] {
        mutating get {
            mergePendingIndexChanges()
            return mergedFetchIndexes
        }
        _modify {
            mergePendingIndexChanges()
            yield &mergedFetchIndexes
        }
    }

    /// Bytes of memory the fetch indexes take (``OrderedIndex/memoryBytes``), without changes
    /// not merged yet.
    var fetchIndexMemoryBytes: Int {
        mergedFetchIndexes.joined().reduce(0) { $0 + $1.value.memoryBytes }
    }

    /// Leaves `changes` (a commit group's, after those applied before it) pending until the
    /// indexes are next read or merged.
    mutating func deferIndexChanges(_ changes: FetchIndexChanges) {
        pendingIndexChanges.append(changes)
    }

    /// Merges the changes handed over and ``pendingIndexChanges`` into the indexes, in that
    /// order: each index takes its net changes, in index order, in one ``OrderedIndex/merge(_:)``.
    mutating func mergePendingIndexChanges() {
        guard handedOverIndexChanges != nil || !pendingIndexChanges.isEmpty else { return }
        if let handedOver = handedOverIndexChanges { handedOver.settled().apply(to: &mergedFetchIndexes) }
        if !pendingIndexChanges.isEmpty { pendingIndexChanges.settled().apply(to: &mergedFetchIndexes) }
        handedOverIndexChanges = nil
        pendingIndexChanges = FetchIndexChanges()
        indexMerges += 1
    }

    /// Hands ``pendingIndexChanges`` over to be merged outside the lock, into a copy of the
    /// indexes (which share their untouched chunks with these): the indexes to merge them into,
    /// the changes and the merge count to give back to ``finishIndexMerge(_:)``. Until then, a
    /// read of the indexes merges them itself. `nil` when nothing is pending or a merge is under
    /// way, and when some index takes its changes one at a time (``OrderedIndex/mergesInOnePass(_:)``):
    /// in a copy, each would copy the chunk it lands in, so they are merged here, in place.
    mutating func beginIndexMerge() -> (indexes: [[Int: OrderedIndex]], changes: FetchIndexChanges, merges: Int)? {
        guard handedOverIndexChanges == nil, !pendingIndexChanges.isEmpty else { return nil }
        let inOnePass = pendingIndexChanges.countsByIndex.allSatisfy { index in
            mergedFetchIndexes[index.entity][index.column]?.mergesInOnePass(index.count) ?? true
        }
        guard inOnePass else {
            mergePendingIndexChanges()
            return nil
        }
        let changes = pendingIndexChanges
        handedOverIndexChanges = changes
        pendingIndexChanges = FetchIndexChanges()
        return (mergedFetchIndexes, changes, indexMerges)
    }

    /// Takes the indexes a merge begun by ``beginIndexMerge()`` made, unless a read merged the
    /// changes handed over meanwhile.
    mutating func finishIndexMerge(_ merged: (indexes: [[Int: OrderedIndex]], merges: Int)) {
        guard handedOverIndexChanges != nil, indexMerges == merged.merges else { return }
        mergedFetchIndexes = merged.indexes
        handedOverIndexChanges = nil
        indexMerges += 1
    }

    /// Moves `key`'s fetch-index entries from the values of `old` to those of `new`.
    mutating func updateFetchIndexes(_ entity: Int, _ key: Int64, old: Row?, new: Row?) {
        // A copy of the keys: iterating the dictionary's own view while mutating it would make
        // every mutation copy the index.
        for column in Array(fetchIndexes[entity].keys) {
            let before = old?[column]
            let after = new?[column]
            if before == after { continue }
            if let before { fetchIndexes[entity][column]!.remove(before, key: key) }
            if let after { fetchIndexes[entity][column]!.insert(after, key: key) }
        }
    }
}

/// A row location with its block's place and the open file holding it.
struct ResolvedRow: Sendable {
    /// The row's location.
    var location: RowLocation
    /// The block's place in the log.
    var block: BlockLocation
    /// The file holding the block (kept alive while the row is read).
    var file: SegmentFile
}

/// The parts of a record that applying it needs.
struct RecordSummary: Sendable {
    /// Transaction or compaction.
    var kind: RecordKind
    /// The commit sequence.
    var sequence: UInt64
    /// The record's length.
    var length: Int
    /// The operations.
    var ops: [RecordOp]
    /// The blocks' places in the record.
    var blocks: [BlockSpan]
    /// The history consumer cursors a transaction advances.
    var cursors: [String: UInt64] = [:]
}

/// Changes to one segment's live and dead byte counts, summed before they are added to its
/// ``SegmentStats`` (one dictionary access for many operations).
private struct SegmentByteCounts {
    /// The change of ``SegmentStats/liveBytes``.
    var live: Int64 = 0
    /// The change of ``SegmentStats/deadBytes``.
    var dead: Int64 = 0

    /// Adds the changes to `stats`, when the segment has them.
    func add(to stats: inout SegmentStats?) {
        guard live != 0 || dead != 0 else { return }
        stats?.liveBytes += live
        stats?.deadBytes += dead
    }
}
