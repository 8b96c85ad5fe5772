import Dispatch
import Foundation
import Synchronization

/// A commit waiting for the group-commit leader.
struct PendingCommit: Sendable {
    /// The encoded record.
    var record: EncodedRecord
    /// Old and new row images of operations on entities with fetch indexes, in operation order
    /// (none when ``indexChanges`` were recorded).
    var rows: [IndexedRowChange]
    /// The fetch-index changes of ``rows``, recorded while the commit was encoded when it only
    /// inserts (no old image to read when it is written): what the leader would record from them.
    var indexChanges: FetchIndexChanges?
    /// The store's newest sequence before the old images in ``rows`` were read: they are still
    /// the committed rows when no commit came after it.
    var readSequence: UInt64 = 0
    /// Whether the commit waits for `fdatasync`.
    var durable: Bool
    /// What the commits since the writer's reads must not have changed.
    var condition: CommitCondition?
    /// Where the leader leaves the result.
    var ticket: CommitTicket
    /// Whether the commit follows the one before it in a batch (``Store/commit(_:)-([Transaction])``):
    /// the two are written in the same group, and commit or fail together.
    var continuesBatch = false
}

/// Where the group-commit leader leaves a waiting commit's result, or hands it leadership.
// @unchecked: `result` is written by the leader before `signal()` and read by the waiter only
// after `wait()` returns, and the semaphore orders the two.
final class CommitTicket: @unchecked Sendable {
    /// The commit's sequence number or error; `nil` when woken to lead.
    var result: Result<UInt64, StoreError>?
    /// Signalled when `result` is set or leadership is handed over.
    private let semaphore = DispatchSemaphore(value: 0)

    /// Wakes the ticket's thread: its result is set, or it is to lead.
    func signal() {
        semaphore.signal()
    }

    /// Sleeps until the ticket's next signal (at once when it came already).
    func wait() {
        semaphore.wait()
    }
}

/// Commits waiting to be written, and whether a leader is writing.
struct CommitQueue: Sendable {
    /// Commits in arrival order.
    var pending: [PendingCommit] = []
    /// Whether a leader is running.
    var leaderActive = false
}

/// Whether a key is live within a commit group, with the indexed values of its newest image
/// where known.
private enum GroupImage {
    case live(IndexedValues?)
    case deleted
}

extension Store {
    /// The most bytes one group write carries.
    private static let groupLimit = 4 << 20
    /// How far ahead of the log the active segment's space is allocated, and written with zeros
    /// past the group that allocates it. Overwriting allocated space makes `fdatasync` skip the
    /// file-size journal commit an append needs: on the reference machine 8,000 syncs/s instead
    /// of 280 (docs/FORMAT.md, "Segment files"). Overwriting space already written (not only
    /// allocated, which ext4 marks unwritten until a write converts it, a journalled change)
    /// skips the extent change too: an append and `fdatasync` of 2 KB took 135-147 µs there
    /// instead of 168-188 µs.
    static let preallocationWindow = 4 << 20

    /// Commits `transaction`: all of its operations or none.
    ///
    /// Concurrent commits share one write and one `fdatasync` (group commit). In `.durable` mode
    /// the call returns once the record is on stable storage.
    ///
    /// - Returns: the commit's sequence number, one more than the previous commit's.
    /// - Throws: ``StoreError`` `invalidValue` (a value that does not fit its column),
    ///   `keyConflict` (insert of a live key, update or delete of a missing one), `writeConflict`
    ///   (the transaction's ``Transaction/condition`` failed; nothing is written), `io`/`diskFull`
    ///   (nothing of this commit is written), `failStopped` (an earlier fsync failed), `closed`,
    ///   `readOnly`. A failed commit leaves every earlier commit intact.
    @discardableResult
    public func commit(_ transaction: Transaction) throws -> UInt64 {
        try checkOpen(writing: true)
        guard !transaction.operations.isEmpty else {
            let known = historyConsumers
            for (name, sequence) in transaction.consumerCursors where known[name] != nil {
                try advanceHistoryConsumer(name, to: sequence)
            }
            return lastSequence
        }
        var written: [EntityKey: Row?] = [:]
        let recordsRows = !transaction.insertsOnly && !transaction.writesRisingKeys
        return try submit([try encode(transaction, written: &written, recordsRows: recordsRows)])[0].get()
    }

    /// Encodes `transaction` into a record waiting to be committed; `written` holds the rows
    /// earlier operations of the transaction (and of the batch it belongs to) wrote, `nil` once
    /// deleted, so that prior rows and tombstones are taken from them rather than the committed ones.
    ///
    /// - Parameter recordsRows: whether the rows written go in `written`; `false` when no later
    ///   operation of the transaction or batch reads a row an earlier one wrote: when none
    ///   updates or deletes (a bulk insert), or when each key is written once.
    /// - Throws: ``StoreError`` `invalidValue`, and `keyConflict` for a delete of a missing row
    ///   whose tombstone is kept.
    func encode(
        _ transaction: Transaction, written: inout [EntityKey: Row?], recordsRows: Bool = true
    ) throws -> PendingCommit {
        loadPendingFetchIndexes()
        let readSequence = lastSequence
        var builder = newRecordBuilder()
        var rows: [IndexedRowChange] = []
        var highestKeys = [Int64](repeating: 0, count: schema.entities.count)
        let keepsPriorRows = configuration.historyTracking
        let committed = try committedPriorRows(of: transaction)
        /// The row as it is before the operation at `index`: written earlier in the transaction
        /// (or batch), else committed.
        func prior(_ entity: Int, _ key: PrimaryKey, at index: Int) throws -> PriorRow? {
            if let row = written[EntityKey(entity: entity, key: key)] { return row.map(PriorRow.decoded) }
            if let committed { return committed[index] }
            return try read(entity, key: key).map(PriorRow.decoded)
        }
        let operations = transaction.operations
        // A bulk insert is encoded on up to `commitThreads` threads; any other transaction in one pass.
        let sharesOut =
            configuration.commitThreads > 1 && operations.count >= 2 * ParallelParts.rowsPerPart
            && transaction.insertsOnly
        var indexChanges: FetchIndexChanges?
        // An insert-only transaction's changes are recorded here, on the writer's thread, rather
        // than by the group's leader: its inserts have no old image for the leader to check.
        if transaction.insertsOnly { indexChanges = FetchIndexChanges(reservingPerIndex: operations.count) }
        if sharesOut {
            indexChanges = try encodeInserts(count: operations.count, into: &builder, highestKeys: &highestKeys) {
                range, encode in
                for index in range {
                    guard case .insert(let entity, let key, let row) = operations[index] else { continue }
                    try encode(entity, key, row)
                }
            }
            if recordsRows {
                for case .insert(let entity, let key, let row) in operations {
                    written[EntityKey(entity: entity, key: key)] = row
                }
            }
        }
        for index in (sharesOut ? operations.count : 0)..<operations.count {
            let op = operations[index]
            let entity = op.entity
            try Self.checkTarget(entity: entity, key: op.key, entityCount: schema.entities.count)
            let codec = codecs[entity]
            let indexed = !schema.entities[entity].indexedColumns.isEmpty
            switch op {
            case .insert(_, let key, let row):
                try encodeInsert(
                    entity: entity, key: key, row: row, codec: codec, into: &builder, highestKeys: &highestKeys)
                if indexed {
                    if indexChanges != nil {
                        indexChanges!.record(entity, key, columns: indexedColumns[entity], old: nil, new: .row(row))
                    } else {
                        rows.append(IndexedRowChange(op: index, old: nil, new: .row(row)))
                    }
                }
                if recordsRows { written[EntityKey(entity: entity, key: key)] = row }
            case .update(_, let key, let row, let changed):
                try codec.validate(row)
                guard changed.allSatisfy({ codec.types.indices.contains($0) }) else {
                    throw StoreError(
                        .invalidValue, "changed columns \(changed) are not all columns of \(codec.entityName)")
                }
                builder.add(.update, entity: entity, key: key, row: row, codec: codec, changedColumns: changed)
                let reindexes =
                    indexed && changed.contains(where: { schema.entities[entity].columns[$0].hasFetchIndex })
                // The prior row is read once, for history and for the fetch indexes.
                let before = needsPriorRow(op) ? try prior(entity, key, at: index) : nil
                if keepsPriorRows, let before { try addPrior(before, entity: entity, to: &builder) }
                if recordsRows { written[EntityKey(entity: entity, key: key)] = row }
                if reindexes {
                    rows.append(
                        IndexedRowChange(
                            op: index, old: try before.map { try indexedValues($0, entity: entity) }, new: .row(row)))
                }
            case .delete(_, let key):
                let keep = schema.entities[entity].tombstoneColumns
                let current = needsPriorRow(op) ? try prior(entity, key, at: index) : nil
                if keep.isEmpty {
                    builder.addMarker(.delete, entity: entity, key: key)
                } else {
                    guard let current else {
                        throw StoreError(.keyConflict, "delete of \(codec.entityName) \(key), which does not exist")
                    }
                    let tombstone = schema.entities[entity].tombstone(
                        of: try decoded(current, entity: entity), width: codec.types.count)
                    builder.add(.delete, entity: entity, key: key, row: tombstone, codec: codec)
                }
                if let current, keepsPriorRows { try addPrior(current, entity: entity, to: &builder) }
                if recordsRows { written[EntityKey(entity: entity, key: key)] = .some(nil) }
                if indexed {
                    rows.append(
                        IndexedRowChange(
                            op: index, old: try current.map { try indexedValues($0, entity: entity) }, new: nil))
                }
            }
        }
        return try pendingCommit(
            transaction, builder: builder, rows: rows, indexChanges: indexChanges, readSequence: readSequence,
            highestKeys: highestKeys)
    }

    /// An empty builder of a transaction record.
    func newRecordBuilder() -> RecordBuilder {
        RecordBuilder(
            kind: .transaction, blockSize: configuration.blockSize, schemaVersion: UInt8(schemaHistory.version))
    }

    /// The commit of `transaction` whose operations are encoded in `builder`: raises the next
    /// keys above `highestKeys` and builds the record.
    ///
    /// - Throws: ``StoreError`` `invalidValue` for a record larger than 1 GiB or of more than
    ///   65,535 blocks.
    func pendingCommit(
        _ transaction: Transaction, builder: RecordBuilder, rows: [IndexedRowChange], indexChanges: FetchIndexChanges?,
        readSequence: UInt64,
        highestKeys: [Int64]
    ) throws -> PendingCommit {
        raiseNextKeys(highestKeys)
        let record = builder.build(
            timestamp: transaction.timestamp, author: transaction.author, contextName: transaction.contextName,
            bundleID: transaction.bundleID, processID: transaction.processID, cursors: transaction.consumerCursors,
            decodedBudget: cache.freeRoom, threads: configuration.commitThreads)
        try record.checkSize()
        let durable = (transaction.durability ?? configuration.durability) == .durable
        return PendingCommit(
            record: record, rows: rows, indexChanges: indexChanges, readSequence: readSequence, durable: durable,
            condition: transaction.condition, ticket: CommitTicket())
    }

    /// Moves each entity's next key above the highest key of it a commit writes (0: none).
    func raiseNextKeys(_ highestKeys: [Int64]) {
        guard highestKeys.contains(where: { $0 > 0 }) else { return }
        nextKeys.withLock { keys in
            for (entity, key) in highestKeys.enumerated() where key > 0 && key >= keys[entity] {
                keys[entity] = key + 1
            }
        }
    }

    /// Queues `commits` one after the other, writes them (leading the group commit when no
    /// other thread does) and returns each one's result, in order.
    func submit(_ commits: [PendingCommit]) -> [Result<UInt64, StoreError>] {
        let leads = commitQueue.withLock { queue in
            queue.pending.append(contentsOf: commits)
            if queue.leaderActive { return false }
            queue.leaderActive = true
            return true
        }
        // A leader writes the queue from its front, so this thread's first commit is in its group.
        if leads { lead() }
        // Each ticket is signalled once for its result, or to hand this thread leadership of
        // the commits after the groups written so far.
        return commits.map { commit in
            while true {
                commit.ticket.wait()
                if let result = commit.ticket.result { return result }
                lead()
            }
        }
    }

    /// Writes one group of waiting commits, then hands leadership to the next waiter, if any.
    private func lead() {
        let batch = commitQueue.withLock { queue in
            var bytes = 0
            var count = 0
            for item in queue.pending {
                if count > 0 && !item.continuesBatch && bytes + item.record.bytes.count > Self.groupLimit { break }
                bytes += item.record.bytes.count
                count += 1
            }
            let batch = Array(queue.pending.prefix(count))
            queue.pending.removeFirst(count)
            return batch
        }
        let results = appendLock.withLock { _ in writeGroup(batch) }
        for (item, result) in zip(batch, results) {
            item.ticket.result = result
            item.ticket.signal()
        }
        let next = commitQueue.withLock { queue -> CommitTicket? in
            guard let first = queue.pending.first else {
                queue.leaderActive = false
                return nil
            }
            return first.ticket
        }
        next?.signal()
    }

    /// Validates, writes, syncs and applies a group of commits; returns each one's result.
    private func writeGroup(_ batch: [PendingCommit]) -> [Result<UInt64, StoreError>] {
        var results = [Result<UInt64, StoreError>?](repeating: nil, count: batch.count)
        do {
            try checkOpen(writing: true)
        } catch {
            let storeError = error as? StoreError ?? StoreError(.failStopped, "the store refuses writes", path: path)
            return batch.map { _ in .failure(storeError) }
        }
        var accepted: [(index: Int, rows: [IndexedRowChange])] = []
        var images: [EntityKey: GroupImage] = [:]
        let recent = recentCommits.withLock { recent in
            if recent.floor == nil { recent.floor = state.lastSequence }
            return recent
        }
        let groupBase = state.lastSequence
        // The keys written by the commits of the group accepted so far (only a condition reads them).
        var groupWritten: [Int: [PrimaryKey]] = [:]
        let checksConditions = batch.contains { $0.condition != nil }
        // When no key is written twice in the group (a bulk insert, concurrent saves of new objects),
        // no image is kept per key.
        let distinctKeys = Self.writesDistinctKeys(batch, entityCount: schema.entities.count)
        // A commit, or a batch of them, is accepted whole or refused whole.
        var unitStart = 0
        while unitStart < batch.count {
            var unitEnd = unitStart + 1
            while unitEnd < batch.count && batch[unitEnd].continuesBatch { unitEnd += 1 }
            // What the unit changed in `images`, to put back when it fails.
            var undo: [(EntityKey, GroupImage?)] = []
            var unitWritten = groupWritten
            var unitAccepted: [(index: Int, rows: [IndexedRowChange])] = []
            var failure: StoreError?
            for index in unitStart..<unitEnd {
                let item = batch[index]
                if let condition = item.condition, !recent.holds(condition) || condition.isBroken(by: unitWritten) {
                    failure = StoreError(
                        .writeConflict,
                        "a commit since sequence \(condition.since) changed rows this transaction depends on")
                    break
                }
                switch validate(
                    item, against: &images, undo: &undo, imagesCurrent: item.readSequence == groupBase,
                    distinctKeys: distinctKeys)
                {
                case .success(let rows):
                    unitAccepted.append((index, rows))
                    if checksConditions {
                        for op in item.record.ops { unitWritten[op.entity, default: []].append(op.key) }
                    }
                case .failure(let error): failure = error
                }
                if failure != nil { break }
            }
            if let failure {
                for (id, image) in undo.reversed() { images[id] = image }
                for index in unitStart..<unitEnd { results[index] = .failure(failure) }
            } else {
                groupWritten = unitWritten
                accepted += unitAccepted
            }
            unitStart = unitEnd
        }
        guard !accepted.isEmpty else { return results.map { $0! } }

        // The group's fetch-index changes, netted out and put in index order before the state is
        // locked to merge them: those of a large group on another core while it is sealed and written.
        let recordedIndexChanges = accepted.map {
            (ops: batch[$0.index].record.ops, rows: $0.rows, recorded: batch[$0.index].indexChanges)
        }
        let settling = settleAside(recordedIndexChanges)
        let firstSequence = state.lastSequence + 1
        let sealed = SealedGroup(accepted.map { batch[$0.index].record.bytes }, firstSequence: firstSequence)
        let groupBytes = sealed.count
        let durable = accepted.contains { batch[$0.index].durable }
        do {
            let (end, segmentFull) = state.withLock {
                ($0.activeEnd, $0.activeEnd + Int64(groupBytes) > Int64(configuration.segmentSize))
            }
            if segmentFull && end > Int64(SegmentFile.headerSize) {
                do { try rollSegment() } catch { throw failStop(error, "starting a new segment") }
            }
            let (file, start, known) = state.withLock {
                ($0.activeFile, $0.activeEnd, $0.preallocatedEnd)
            }
            var allocated = known
            if start + Int64(groupBytes) > allocated {
                // The window the maintenance thread may be allocating ends first.
                spaceAllocating.wait()
                allocated = state.withLock { $0.preallocatedEnd }
            }
            do {
                if start + Int64(groupBytes) > allocated {
                    let length = max(Int64(groupBytes), Int64(min(Self.preallocationWindow, configuration.segmentSize)))
                    try StoreError.io("allocate segment space", path: file.path) {
                        try io.preallocate(file.fd, offset: start, length: length)
                        let written = Int64(groupBytes)
                        try io.writeZeros(file.fd, at: start + written, length: length - written)
                    }
                    state.withLock { $0.preallocatedEnd = start + length }
                    counters.spaceAllocations.add(1)
                }
                try StoreError.io("append to segment", path: file.path) {
                    try sealed.write(to: file.fd, at: start, io: io)
                }
            } catch {
                do {
                    spaceAllocating.wait()
                    try io.ftruncate(file.fd, to: start)
                    state.withLock { $0.preallocatedEnd = start }
                } catch { throw failStop(error, "undoing a failed append") }
                throw error
            }
            if durable {
                do {
                    try StoreError.io("sync segment", path: file.path) { try io.fdatasync(file.fd) }
                } catch { throw failStop(error, "fdatasync") }
                counters.fsyncs.add(1)
            }
            let interval = Int64(configuration.checkpointInterval)
            // The number the group's first block gets: blocks are numbered in the order applied.
            var firstBlockNumber = 0
            // A large group's changes, put in order while it was written, are merged now; a small
            // group's wait with those of the groups before it (``StoreState/pendingIndexChanges``).
            let settled = settling?.wait()
            let deferred = settled == nil ? Self.gather(recordedIndexChanges, indexedColumns: indexedColumns) : nil
            var pendingIndexChanges = 0
            let (wantsCheckpoint, wantsSpace) = state.withLock { state in
                firstBlockNumber = state.blocks.count
                var offset = start
                for (position, entry) in accepted.enumerated() {
                    let record = batch[entry.index].record
                    let summary = RecordSummary(
                        kind: .transaction, sequence: firstSequence + UInt64(position), length: record.bytes.count,
                        ops: record.ops, blocks: record.blocks, cursors: record.cursors)
                    state.apply(
                        summary, segment: file.id, offset: offset, historyTracking: configuration.historyTracking)
                    offset += Int64(record.bytes.count)
                }
                if let settled {
                    settled.apply(to: &state.fetchIndexes)
                } else if let deferred {
                    state.deferIndexChanges(deferred)
                    pendingIndexChanges = state.pendingIndexChanges.count
                    if pendingIndexChanges >= Self.pendingIndexChangesMergedInline { state.mergePendingIndexChanges() }
                }
                state.activeEnd = start + Int64(groupBytes)
                state.stats[file.id]?.fileBytes = state.activeEnd
                state.bytesSinceCheckpoint += Int64(groupBytes)
                return (state.bytesSinceCheckpoint >= interval, requestSpaceAhead(state))
            }
            cacheWrittenBlocks(accepted.lazy.map { batch[$0.index].record }, firstNumber: firstBlockNumber)
            recentCommits.withLock { recent in
                for (position, entry) in accepted.enumerated() {
                    recent.record(
                        sequence: firstSequence + UInt64(position),
                        written: RecordOp.written(batch[entry.index].record.ops))
                }
            }
            counters.commits.add(accepted.count)
            counters.groupWrites.add(1)
            CommitSignal.notify(self, sequence: firstSequence + UInt64(accepted.count - 1))
            counters.bytesWritten.add(groupBytes)
            let wantsIndexMerge =
                pendingIndexChanges >= Self.pendingIndexChangesMerged
                && !indexMergeRequested.exchange(true, ordering: .acquiringAndReleasing)
            if wantsCheckpoint || wantsIndexMerge || wantsSpace {
                maintenance.wake()
            }
            for (position, entry) in accepted.enumerated() {
                results[entry.index] = .success(firstSequence + UInt64(position))
            }
        } catch {
            let storeError = error as? StoreError ?? StoreError(.io, "commit failed", cause: error)
            for entry in accepted { results[entry.index] = .failure(storeError) }
        }
        return results.map { $0! }
    }

    /// The fewest fetch-index changes a commit group puts in order on another core while it is
    /// written, and merges as it is applied (fewer wait in ``StoreState/pendingIndexChanges``).
    static let indexChangesSettledAside = 4096

    /// The fewest pending fetch-index changes the maintenance thread is woken to merge.
    static let pendingIndexChangesMerged = 4096

    /// The fewest pending fetch-index changes a commit group merges as it is applied, when the
    /// maintenance thread has not merged them.
    static let pendingIndexChangesMergedInline = 16 * pendingIndexChangesMerged

    /// What a group's commit brings to its fetch-index changes: its operations and their old
    /// and new indexed images, or the changes recorded when it was encoded.
    private typealias CommitIndexChanges = (ops: [RecordOp], rows: [IndexedRowChange], recorded: FetchIndexChanges?)

    /// Starts settling the fetch-index changes of a group's commits on another core when they
    /// are ``indexChangesSettledAside`` or more, building there the indexes they fill that are
    /// empty now (a bulk load); `nil` for fewer.
    private func settleAside(
        _ commits: [CommitIndexChanges]
    ) -> BackgroundWork<SettledFetchIndexChanges>? {
        guard commits.reduce(0, { $0 + ($1.recorded?.count ?? $1.rows.count) }) >= Self.indexChangesSettledAside else {
            return nil
        }
        let empty = state.withLock { state in
            state.fetchIndexes.enumerated().flatMap { entity, columns in
                columns.filter { $0.value.count == 0 }.map { (entity: entity, column: $0.key) }
            }
        }
        let indexedColumns = indexedColumns
        return BackgroundWork { Self.gather(commits, indexedColumns: indexedColumns).settled(buildingFor: empty) }
    }

    /// The fetch-index changes of a group's commits, in commit order.
    private static func gather(_ commits: [CommitIndexChanges], indexedColumns: [[Int]]) -> FetchIndexChanges {
        var changes = FetchIndexChanges()
        for commit in commits {
            if let recorded = commit.recorded {
                changes.append(recorded)
            } else {
                changes.record(commit.ops, rows: commit.rows, indexedColumns: indexedColumns)
            }
        }
        return changes
    }

    /// Puts the decoded blocks of `records`, committed in this order with their first block
    /// numbered `firstNumber`, into the block cache's free room (as least recently used, evicting
    /// nothing): a read of rows just written, such as a fault after a save, an update's prior row
    /// or a replay's, finds them decompressed.
    private func cacheWrittenBlocks(_ records: some Sequence<EncodedRecord>, firstNumber: Int) {
        var number = firstNumber
        for record in records {
            for index in record.blocks.indices {
                if index < record.decodedBlocks.count, let block = record.decodedBlocks[index] {
                    cache.insertIfRoom(block, forKey: UInt64(number), cost: block.cost, readAt: block.rowDataAddress)
                }
                number += 1
            }
        }
    }

    /// The most spans of rising keys ``writesDistinctKeys(_:entityCount:)`` sorts and compares.
    private static let distinctKeySpansChecked = 1024

    /// Whether every operation of `batch` writes a different key (all keys positive).
    ///
    /// The group's operations on each entity are cut into spans of rising keys; the keys are
    /// distinct when no two spans of an entity overlap. A bulk insert of newly allocated keys
    /// is one span; the inserts of concurrent saves, each of a range of keys reserved before it
    /// was encoded, are a span each, queued in any order.
    private static func writesDistinctKeys(_ batch: [PendingCommit], entityCount: Int) -> Bool {
        var spans: [(entity: Int, first: Int64, last: Int64)] = []
        // Each entity's newest span: operations on other entities in between do not cut it.
        var open = [Int](repeating: -1, count: entityCount)
        for item in batch {
            for op in item.record.ops {
                guard op.entity < entityCount, op.key > 0 else { return false }
                let newest = open[op.entity]
                if newest >= 0, op.key > spans[newest].last {
                    spans[newest].last = op.key
                } else {
                    // A new span; past the bound (keys in no order, as a large update or delete
                    // in random order writes them) the group keeps its per-key images.
                    guard spans.count < Self.distinctKeySpansChecked else { return false }
                    open[op.entity] = spans.count
                    spans.append((op.entity, op.key, op.key))
                }
            }
        }
        guard spans.count > 1 else { return true }
        spans.sort { ($0.entity, $0.first) < ($1.entity, $1.first) }
        for (earlier, later) in zip(spans, spans.dropFirst())
        where earlier.entity == later.entity && later.first <= earlier.last {
            return false
        }
        return true
    }

    /// Checks a commit's keys against the index and earlier commits of the group, and gathers
    /// the old row images its fetch-index updates need. Adds its images to `local`, appending
    /// what each replaced to `undo`, for the caller to put back when the commit fails.
    ///
    /// - Parameters:
    ///   - imagesCurrent: whether no commit came after the old images the commit read while it
    ///     was encoded, so that they are still the committed rows (else they are read again).
    ///   - distinctKeys: whether no other operation of the group writes a key this commit writes
    ///     (``writesDistinctKeys(_:entityCount:)``): then `local` is neither read nor written.
    private func validate(
        _ item: PendingCommit, against local: inout [EntityKey: GroupImage], undo: inout [(EntityKey, GroupImage?)],
        imagesCurrent: Bool,
        distinctKeys: Bool
    ) -> Result<[IndexedRowChange], StoreError> {
        let ops = item.record.ops
        var rows = item.rows
        // A bulk insert encoded in parts keeps no rows: the new images of its inserts are those
        // its recorded changes hold, needed only when another commit of the group writes its keys.
        if !distinctKeys, rows.isEmpty, let recorded = item.indexChanges {
            rows = recorded.insertedRows(ops, indexedColumns: indexedColumns)
        }
        func set(_ id: EntityKey, _ image: GroupImage, replacing current: GroupImage?) {
            undo.append((id, current))
            local[id] = image
        }
        // Whether each key is live in the committed state, read under one lock for the commit. The
        // lookups also read the keys' pages of a checkpoint's index not yet read, so that applying
        // the commit sets them without I/O, and a damaged page fails the commit before its write.
        let committed: [Bool]
        do {
            committed = try state.withLock { state in
                try ops.map { op in
                    guard state.entities.indices.contains(op.entity) else { return false }
                    return try state.entities[op.entity].location(of: op.key).isPresent
                }
            }
        } catch {
            return .failure(error as? StoreError ?? StoreError(.io, "reading the object index failed: \(error)"))
        }
        var next = 0
        do {
            for (index, op) in ops.enumerated() {
                let id = EntityKey(entity: op.entity, key: op.key)
                let current = distinctKeys ? nil : local[id]
                let live: Bool
                switch current {
                case .live?: live = true
                case .deleted?: live = false
                case nil: live = committed[index]
                }
                switch op.kind {
                case .insert:
                    guard !live else {
                        throw StoreError(
                            .keyConflict, "insert of \(schema.entities[op.entity].name) \(op.key), which exists")
                    }
                case .update, .delete:
                    guard live else {
                        throw StoreError(
                            .keyConflict,
                            "\(op.kind == .update ? "update" : "delete") of \(schema.entities[op.entity].name) \(op.key), which does not exist"
                        )
                    }
                case .put, .erase:
                    break
                }
                if next < rows.count, rows[next].op == index {
                    if op.kind != .insert {
                        if case .live(let image?) = current {
                            rows[next].old = image
                        } else if !imagesCurrent {
                            rows[next].old = try read(op.entity, key: op.key).map(IndexedValues.row)
                        }
                    }
                    if !distinctKeys { set(id, op.kind.removes ? .deleted : .live(rows[next].new), replacing: current) }
                    next += 1
                } else if distinctKeys {
                    // No later operation of the group reads this key's image.
                } else if op.kind.removes {
                    set(id, .deleted, replacing: current)
                } else if case .live? = current {
                    // An update that changes no indexed column: the image known so far still
                    // holds the indexed values a later change of this key must remove.
                } else {
                    set(id, .live(nil), replacing: current)
                }
            }
        } catch {
            return .failure(error as? StoreError ?? StoreError(.io, "reading an old row failed", cause: error))
        }
        return .success(rows)
    }

    /// Stops writes until reopen after a failure that may have left the log in an unknown state.
    func failStop(_ error: any Error, _ what: String) -> StoreError {
        let description = "\(what): \(error)"
        lifecycle.withLock { $0.failure = description }
        logger.critical(
            "store stops accepting writes until reopened", metadata: ["path": "\(path)", "error": "\(description)"])
        let cause = error as? StoreError
        return StoreError(
            cause?.code ?? .io, "\(what) failed; the store refuses writes until it is reopened", path: cause?.path,
            cause: cause)
    }
}
