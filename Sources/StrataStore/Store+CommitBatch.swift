extension Store {
    /// Commits `transactions` in order, all of them or none, each as its own record with its own
    /// sequence number and its own history (author, context, timestamp, consumer cursors), as
    /// committing them one after the other would; but in one group: one append and at most one
    /// `fdatasync` (when any of them is durable).
    ///
    /// A transaction sees the rows the ones before it in `transactions` wrote (for its prior
    /// rows, tombstones and key checks). A transaction without operations commits no record;
    /// its consumer cursors advance after the batch is written.
    ///
    /// - Parameter transactions: the transactions, oldest first.
    /// - Returns: the sequence number of each transaction's commit, in order (for one without
    ///   operations, the newest sequence when the batch was written).
    /// - Throws: what committing one transaction throws; when one transaction fails, none of
    ///   the batch is written.
    @discardableResult
    public func commit(_ transactions: [Transaction]) throws -> [UInt64] {
        try checkOpen(writing: true)
        var written: [EntityKey: Row?] = [:]
        let recordsRows = !transactions.allSatisfy(\.insertsOnly)
        var commits: [PendingCommit] = []
        var emptyCursors: [String: UInt64] = [:]
        var positions: [Int?] = []
        for transaction in transactions {
            guard !transaction.operations.isEmpty else {
                emptyCursors.merge(transaction.consumerCursors) { Swift.max($0, $1) }
                positions.append(nil)
                continue
            }
            var pending = try encode(transaction, written: &written, recordsRows: recordsRows)
            pending.continuesBatch = !commits.isEmpty
            positions.append(commits.count)
            commits.append(pending)
        }
        let sequences = try commits.isEmpty ? [] : submit(commits).map { try $0.get() }
        let known = historyConsumers
        for (name, sequence) in emptyCursors where known[name] != nil { try advanceHistoryConsumer(name, to: sequence) }
        let newest = lastSequence
        return positions.map { $0.map { sequences[$0] } ?? newest }
    }
}
