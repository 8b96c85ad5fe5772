import Foundation

extension Store {
    /// The start of the names of replay cursors: history consumers that count another store's
    /// sequences, which hold none of this store's history.
    public static let replayConsumerPrefix = "replay:"

    /// The name of the history consumer in which a destination store keeps how far it applied
    /// the history of the store `sourceID` (a source sequence: it does not hold this store's
    /// history floor, and is never evicted).
    public static func replayConsumerName(source sourceID: UUID) -> String {
        replayConsumerPrefix + sourceID.uuidString
    }

    /// The most transactions, and the most changes, one replay batch commits.
    static let replayBatchLimits = (transactions: 1_024, changes: 16_384)

    /// Applies the history of `source` (a store of the same schema) to this store: each source
    /// transaction becomes a commit of this store with the same keys, author, context,
    /// timestamp and process, and also records, in a history consumer of this store
    /// (``replayConsumerName(source:)``), the source transaction it applied. So the replay
    /// resumes where it stopped, even after a crash, and applies no transaction twice.
    ///
    /// Each source record is re-encoded as this store's record without decoding its rows (their
    /// bytes are copied when both stores encode them alike; only the rows fetch indexes and
    /// tombstones need are decoded). The commits are written in batches (one append per batch,
    /// each transaction its own record, all or none), relaxed but the last: the replay syncs
    /// once, when it ends. Without `aroundEachBatch`, a batch is written on another thread while
    /// the next is re-encoded (``ReplayCommitPipeline``); its prior rows are then taken from the
    /// batch in flight where it wrote the key (``ReplayWrites``).
    ///
    /// - Parameters:
    ///   - source: the store whose history to apply; it may be open read-only.
    ///   - sequence: start after this source transaction instead of after the last one applied
    ///     (never before it).
    ///   - progress: called after each transaction is added to the batch being committed, with
    ///     the transactions applied and the number to apply; what it throws stops the replay
    ///     once the transactions counted so far are committed (they are not applied again).
    ///   - aroundEachBatch: called with the changes of each batch of transactions and the call
    ///     that commits it, which it must make once (a coordinator records what pinned readers
    ///     need before it, and tells its contexts after it); `nil` commits each batch directly.
    /// - Returns: the number of transactions applied.
    /// - Throws: ``StoreError`` `schemaMismatch` for a source of another schema;
    ///   `historyUnavailable` when the source's history after the resume point was deleted or
    ///   either store does not keep history; `keyConflict` when this store holds rows the
    ///   history does not explain; `corrupt` for a source record that does not decode; what
    ///   ``commit(_:)`` and `progress` throw.
    @discardableResult
    public func replayHistory(
        from source: Store, after sequence: UInt64? = nil,
        progress: ((_ applied: Int, _ total: Int) throws -> Void)? = nil,
        aroundEachBatch: ((_ changes: [ReplayedChange], _ commit: () throws -> Void) throws -> Void)? = nil
    ) throws -> Int {
        let (name, start) = try replayStart(from: source, after: sequence)
        let total = Int(source.lastSequence - min(start, source.lastSequence))
        let encoding = ReplayEncoding(source: source, into: self, cursor: name)
        loadPendingFetchIndexes()
        var applied = 0
        // A crash loses at most the unsynced tail of the replay, cursor included, which the
        // next replay applies again.
        var batch: [PendingCommit] = []
        var batchChanges: [ReplayedChange] = []
        // Sized once for a batch (a guess of 8 changes per transaction for a short replay).
        let expectedChanges = min(Self.replayBatchLimits.changes, max(total, 1) * 8)
        // The images the batches wrote, for the prior rows of later changes of the same keys.
        var written = ReplayWrites(reservingCapacity: expectedChanges)
        batchChanges.reserveCapacity(expectedChanges)
        // The newest source transaction without changes in the batch, whose cursor advances alone.
        var emptyCursor: UInt64?
        // Batches are committed on another thread while the next is built, unless each must go
        // through `aroundEachBatch` on this one.
        let pipeline = aroundEachBatch == nil ? ReplayCommitPipeline() : nil
        // The sequence the store reaches once the batch in flight has committed.
        var inFlightEnd: UInt64?
        func commitBatch(final: Bool) throws {
            if final { try pipeline?.wait() }
            guard !batch.isEmpty || emptyCursor != nil else { return }
            if final && !batch.isEmpty { batch[batch.count - 1].durable = configuration.durability == .durable }
            for index in batch.indices.dropFirst() { batch[index].continuesBatch = true }
            let commits = batch
            let advance = emptyCursor
            let write = { @Sendable in
                if !commits.isEmpty { for result in self.submit(commits) { _ = try result.get() } }
                if let advance { try self.advanceHistoryConsumer(name, to: advance) }
            }
            if let aroundEachBatch {
                try aroundEachBatch(batchChanges, write)
            } else if let pipeline, !final {
                // Read once the batch before has committed, before this one starts.
                try pipeline.wait()
                inFlightEnd = lastSequence + UInt64(commits.count)
                try pipeline.start(write)
            } else {
                try write()
            }
            batch.removeAll(keepingCapacity: true)
            batchChanges.removeAll(keepingCapacity: true)
            if inFlightEnd == nil || final {
                written.batchesCommitted()
                inFlightEnd = nil
            } else {
                written.batchStarted()
            }
            emptyCursor = nil
        }
        do {
            try source.forEachHistoryRecord(after: start) { record, bytes, recordStart, entry, file in
                if !batch.isEmpty && batchChanges.count + record.ops.count > Self.replayBatchLimits.changes {
                    try commitBatch(final: false)
                }
                if record.ops.isEmpty {
                    emptyCursor = record.sequence
                } else {
                    batch.append(
                        try replayCommit(
                            of: record, bytes: bytes, start: recordStart, entry: entry, file: file, encoding: encoding,
                            written: &written, changes: &batchChanges, readSequence: inFlightEnd ?? lastSequence,
                            durable: false))
                }
                applied += 1
                do {
                    try progress?(applied, total)
                } catch {
                    // What progress counted as applied is committed before the replay stops.
                    try commitBatch(final: true)
                    throw error
                }
                if batch.count == Self.replayBatchLimits.transactions { try commitBatch(final: false) }
                return true
            }
            try commitBatch(final: true)
        } catch {
            // No batch is left being written when the replay stops.
            try? pipeline?.wait()
            throw error
        }
        if applied > 0 {
            logger.debug(
                "replayed history",
                metadata: ["source": "\(source.path)", "transactions": "\(applied)", "path": "\(path)"])
        }
        return applied
    }
}
