extension Store {
    /// The sequence numbers of the retained history, oldest to newest, or `nil` when none is kept.
    public var historyRange: ClosedRange<UInt64>? {
        state.withLock { state in
            guard let first = state.history.first, let last = state.history.last else { return nil }
            return first.sequence...last.sequence
        }
    }

    /// The sequence at or below which history was deleted (0 when none was).
    public var historyFloor: UInt64 {
        state.withLock { $0.historyFloor }
    }

    /// The committed transactions after `sequence`, oldest first, with their changes.
    ///
    /// Costs one read per transaction and one decompression per block of row images.
    ///
    /// - Parameters:
    ///   - sequence: return transactions with a larger sequence number (exclusive).
    ///   - limit: return at most this many.
    /// - Throws: ``StoreError/Code/historyUnavailable`` when history tracking is off or history
    ///   after `sequence` was already deleted (the caller's token expired); `corrupt`, `io`.
    public func history(after sequence: UInt64 = 0, limit: Int? = nil) throws -> [HistoryTransaction] {
        var transactions: [HistoryTransaction] = []
        try forEachHistoryTransaction(after: sequence) { transaction in
            // Checked before appending too, so that a limit of 0 returns nothing.
            guard limit.map({ transactions.count < $0 }) ?? true else { return false }
            transactions.append(transaction)
            return limit.map { transactions.count < $0 } ?? true
        }
        return transactions
    }

    /// Calls `body` with each committed transaction after `sequence`, oldest first, until it
    /// returns `false`. Reads one transaction at a time, so it suits long histories.
    ///
    /// - Throws: as ``history(after:limit:)``, and what `body` throws.
    public func forEachHistoryTransaction(after sequence: UInt64, _ body: (HistoryTransaction) throws -> Bool) throws {
        try forEachHistoryRecord(after: sequence) { record, bytes, start, entry, file in
            try body(try historyTransaction(record, bytes: bytes, start: start, offset: entry.offset, file: file))
        }
    }

    /// Decodes one parsed history record, whose bytes start at `start` of `bytes` and at `offset` of `file`.
    func historyTransaction(
        _ record: ParsedRecord, bytes: [UInt8], start: Int, offset: Int64, file: SegmentFile
    ) throws -> HistoryTransaction {
        try checkOperations(of: record, path: file.path, offset: offset)
        var blocks: [Int: DecodedBlock] = [:]
        var changes: [HistoryChange] = []
        changes.reserveCapacity(record.ops.count)
        func row(block: Int, slot: Int, entity: Int) throws -> Row? {
            guard block >= 0 else { return nil }
            let span = record.blocks[block]
            let decoded: DecodedBlock
            if let cached = blocks[block] {
                decoded = cached
            } else {
                decoded = try Self.decodeBlock(
                    span, in: bytes, recordStart: start, path: file.path, recordOffset: offset)
                blocks[block] = decoded
            }
            return try decodeRow(decoded, slot: slot, entity: entity, file: file, offset: offset + Int64(span.offset))
        }
        for op in record.ops {
            let image = try row(block: op.block, slot: op.slot, entity: op.entity)
            let kind: ChangeKind = op.kind == .insert ? .insert : op.kind == .update ? .update : .delete
            changes.append(
                HistoryChange(
                    kind: kind, entity: op.entity, key: op.key,
                    changedColumns: kind == .insert
                        ? Array(schema.entities[op.entity].columns.indices) : op.changedColumns,
                    row: kind == .delete ? nil : image, tombstone: kind == .delete ? image : nil,
                    previousRow: try row(block: op.priorBlock, slot: op.priorSlot, entity: op.entity)))
        }
        return HistoryTransaction(
            sequence: record.sequence, timestamp: record.timestamp, author: record.author,
            contextName: record.contextName, bundleID: record.bundleID, processID: record.processID, changes: changes)
    }

    /// Deletes the history of every transaction with a sequence number below `sequence`
    /// (exclusive, as Core Data's `deleteHistory(before:)`), so compaction may reclaim it; what
    /// a live history consumer has not consumed yet stays until it advances or is evicted
    /// (see ``StoreConfiguration/historyConsumerLagLimit``).
    ///
    /// Moves the retention floor and writes the manifest; costs one atomic file replace.
    ///
    /// - Throws: ``StoreError`` `io`/`diskFull` when the manifest cannot be written (the floor
    ///   then stays where it was after reopen).
    public func deleteHistory(before sequence: UInt64) throws {
        try checkOpen(writing: true)
        try manifestLock.withLock { status in
            let changed = state.withLock { state in
                let floor = min(sequence &- 1, state.lastSequence)
                guard sequence > 0, floor > state.requestedHistoryFloor else { return false }
                state.requestedHistoryFloor = floor
                return true
            }
            guard changed else { return }
            evictLaggingConsumers()
            state.withLock { _ = $0.raiseHistoryFloor() }
            try publishManifest(status)
        }
        maintenance.wake()
    }
}

extension RandomAccessCollection where Index == Int {
    /// The index of the first element for which `belongs` is true, in a collection partitioned
    /// so that all such elements come last (binary search).
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
