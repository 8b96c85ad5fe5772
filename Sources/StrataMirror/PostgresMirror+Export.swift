import Foundation
import Logging
import PostgresNIO
import Strata
import StrataStore

/// Asynchronous mode: saves commit locally; the tail exports them from the store's persistent
/// history, after the export cursor (a history consumer of the store, so the history stays
/// until it is exported, across crashes and while PostgreSQL is down).
extension PostgresMirror {
    /// The history consumer whose cursor is the last local sequence exported (or from the log).
    static let exportConsumer = "strata.mirror.export"

    /// The local saves not yet exported (call holding the store's save lock). Transactions that
    /// move the cursor came from the log (or are the mirror's bookkeeping) and are not exported.
    func pendingSaves() throws -> MirrorPending {
        guard asynchronous, let consumer = engine.historyConsumers[Self.exportConsumer] else { return MirrorPending() }
        var saves: [HistoryTransaction] = []
        try engine.forEachHistoryTransaction(after: consumer.sequence) { transaction in
            if !transaction.changes.contains(where: location.isCursorChange) { saves.append(transaction) }
            return true
        }
        return MirrorPending(saves)
    }

    /// An asynchronous save's commit: local only, with the leased key ranges it used; the tail
    /// is woken to export it.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreSave` when the save found no leased keys.
    func commitLocally(
        _ transaction: StrataStore.Transaction, locally: (StrataStore.Transaction) throws -> UInt64
    ) throws -> UInt64 {
        try keys.checkAllocations()
        var local = transaction
        let ranges = keys.changedRanges()
        if let ranges { local.operations.append(try location.setKeys(ranges, in: engine)) }
        let sequence = try locally(local)
        if let ranges { keys.recorded(ranges) }
        wakeTail.withLock { $0 }?()
        return sequence
    }

    /// Leases keys for a save that ran short, blocking it while PostgreSQL answers.
    ///
    /// - Returns: the keys, or `nil` when PostgreSQL is unreachable.
    func leaseNow(_ entity: Int, count: Int64) -> ClosedRange<Int64>? {
        do {
            let range = try bridge.run { [self] in
                let connection = try await connect(on: bridge)
                do {
                    let range = try await connection.withDeadline(seconds: Self.deadline, on: bridge) { [self] in
                        try await connection.send("BEGIN", logger: logger)
                        _ = try await MirrorLogEntry.head(on: connection, forUpdate: true, logger: logger)
                        let range = try await MirrorKeys.lease(entity, count: count, on: connection, logger: logger)
                        try await connection.send("COMMIT", logger: logger)
                        return range
                    }
                    try? await connection.close()
                    return range
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
            logger.debug(
                "leased primary keys",
                metadata: ["entity": "\(entity)", "first": "\(range.lowerBound)", "count": "\(count)"])
            return range
        } catch {
            logger.warning(
                "could not lease primary keys from PostgreSQL", metadata: ["error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// One step of the tail: in asynchronous mode, exports the pending saves and refills the key
    /// reserve (the export applies the entries before them too, when they are at most a batch);
    /// otherwise applies a batch of the log.
    ///
    /// - Returns: whether there may be more to do at once.
    func step(on connection: PostgresConnection) async throws -> Bool {
        if asynchronous, try await export(on: connection) { return true }
        return try await catchUp(on: connection)
    }

    /// Exports the pending saves (at most ``MirrorConfiguration/batchSize``) in one PostgreSQL
    /// transaction: under the head lock, reads the entries committed since the store's cursor,
    /// appends the saves after them, updates the row images, leases keys the reserve lacks and
    /// commits. Then, locally, applies those entries over the saves still pending (they come
    /// before the saves in the log, so the saves' changes stay, as everywhere else) and moves
    /// the cursor past the saves and the export cursor to the last one.
    ///
    /// The store's save lock is held only for the local steps (choosing the saves; applying the
    /// entries and recording the export), never while PostgreSQL answers: local saves go on
    /// meanwhile, come after the chosen ones and wait for the next export. (A save short of keys
    /// takes the head lock holding the save lock; the export never takes them the other way
    /// round.) A crash between the commit and the record leaves the saves in the log and pending
    /// locally: the next export finds them in the log (it appends only the others) and its
    /// entries, or the next catch-up, meet them as this instance's and only move the cursors.
    ///
    /// - Returns: whether anything was exported or leased; `false` too when the log is more than
    ///   a batch ahead of the cursor or was pruned past it (the catch-up comes first).
    func export(on connection: PostgresConnection) async throws -> Bool {
        let entities = engine.schema.entities.indices.filter { $0 != location.layout.storeEntity }
        do {
            return try await exportSteps(entities, on: connection)
        } catch {
            try? await connection.close()  // rolls the PostgreSQL transaction back
            throw error
        }
    }

    private func exportSteps(_ entities: [Int], on connection: PostgresConnection) async throws -> Bool {
        let refill = keys.entitiesToRefill(entities)
        // Only this tail moves the cursor in asynchronous mode: it stays put until the record.
        let (saves, cursor) = try await underReplicationLock { [self] () throws -> ([HistoryTransaction], Int64) in
            (Array(try pendingSaves().transactions.prefix(configuration.batchSize)), try self.cursor())
        }
        guard !saves.isEmpty || !refill.isEmpty else { return false }
        typealias Exchange = (
            head: Int64, entries: [MirrorLogEntry], position: Int64, leased: [(Int, ClosedRange<Int64>)]
        )
        let exchange = try await connection.withDeadline(seconds: Self.deadline) {
            [self] () async throws -> Exchange? in
            try await connection.send("BEGIN", logger: logger)
            let head = try await MirrorLogEntry.head(on: connection, forUpdate: true, logger: logger)
            guard head >= cursor else { throw MirrorError.logBehindCursor(head: head, cursor: cursor) }
            guard head - cursor <= Int64(configuration.batchSize) else {
                try await connection.send("ROLLBACK", logger: logger)
                return nil  // more than a batch behind: the catch-up applies it first
            }
            let entries =
                head > cursor
                ? try await MirrorLogEntry.read(
                    after: cursor, limit: Int(head - cursor), on: connection, logger: logger) : []
            guard entries.count == Int(head - cursor), entries.first.map({ $0.position == cursor + 1 }) ?? true else {
                try await connection.send("ROLLBACK", logger: logger)
                return nil  // pruned past the cursor: the catch-up re-bootstraps
            }
            let (position, leased) = try await append(saves, after: head, leasing: refill, on: connection)
            return (head, entries, position, leased)
        }
        guard let exchange else { return false }
        for (entity, range) in exchange.leased { keys.add(range, for: entity) }
        let (head, position) = (exchange.head, exchange.position)
        if position > head {
            _ = try? await connection.withDeadline(seconds: 5) { [self] in
                _ = try await connection.send(
                    "SELECT pg_notify(\(MirrorSchema.channel), \(String(position)))", logger: logger)
            }
            metrics.exported.increment(by: Int(position - head))
            logger.debug("exported local saves", metadata: ["count": "\(position - head)", "position": "\(position)"])
        }
        let applied = try await underReplicationLock { [self] in
            var pending = try pendingSaves()
            let applied = try apply(exchange.entries, pending: &pending)
            try recordExport(through: saves.last?.sequence, position: position)
            return applied
        }
        deliver(applied)
        return true
    }

    /// Appends `saves` to the log after `head` with their row images (one statement, see
    /// ``MirrorLogAppend``), leases a block of keys for each of `refill`, moves the head and
    /// commits (in the transaction holding the head lock). A save the log already holds from
    /// this instance (exported before a crash or a bootstrap) is not appended again.
    ///
    /// - Returns: the new head and the leased ranges.
    private func append(
        _ saves: [HistoryTransaction], after head: Int64, leasing refill: [Int], on connection: PostgresConnection
    ) async throws -> (Int64, [(Int, ClosedRange<Int64>)]) {
        var leased: [(Int, ClosedRange<Int64>)] = []
        for entity in refill {
            leased.append(
                (entity, try await MirrorKeys.lease(entity, count: keys.blockSize, on: connection, logger: logger)))
        }
        let logged = try await MirrorLogAppend.alreadyLogged(
            origin: configuration.instanceName, sequences: saves.map { Int64($0.sequence) }, on: connection,
            logger: logger)
        var batch = MirrorLogAppend(origin: configuration.instanceName)
        let pairs = MirrorPairs(engine: engine)
        for save in saves where !logged.contains(Int64(save.sequence)) {
            var transaction = StrataStore.Transaction(author: save.author, contextName: save.contextName)
            transaction.operations = save.changes.filter { $0.entity != location.layout.storeEntity }.map(\.operation)
            guard !transaction.operations.isEmpty else { continue }
            var deletedRows: [ObjectKey: Row] = [:]
            for change in save.changes where change.kind == .delete && pairs.isJoin(change.entity) {
                if let row = change.previousRow { deletedRows[ObjectKey(entity: change.entity, key: change.key)] = row }
            }
            batch.entries.append(
                MirrorLogAppend.Entry(
                    position: head + 1 + Int64(batch.entries.count), originSequence: Int64(save.sequence),
                    author: save.author,
                    contextName: save.contextName, timestamp: save.timestamp,
                    payload: try MirrorPayload(transaction, deletedRows: deletedRows).encoded(),
                    operations: transaction.operations))
        }
        try await batch.export(on: connection, logger: logger)
        try await connection.send("COMMIT", logger: logger)
        return (batch.head ?? head, leased)
    }

    /// Moves the cursor to `position` and the export cursor to `sequence`, and records the key
    /// ranges, in one local transaction (call holding the store's save lock).
    private func recordExport(through sequence: UInt64?, position: Int64) throws {
        var transaction = StrataStore.Transaction(author: "strata.mirror.export")
        let ranges = keys.changedRanges()
        // The cursor is always written: a transaction that writes it reads as the mirror's, not a save.
        transaction.operations.append(try location.write(cursor: max(position, try cursor()), keys: ranges, in: engine))
        if let sequence { transaction.consumerCursors[Self.exportConsumer] = sequence }
        transaction.durability = Self.appliedDurability
        _ = try coordinator.applyReplicatedTransaction(transaction, to: store)
        if let ranges { keys.recorded(ranges) }
    }
}

extension HistoryChange {
    /// The operation that makes the change again.
    var operation: StrataStore.Operation {
        switch kind {
        case .insert: .insert(entity: entity, key: key, row: row ?? Row([]))
        case .update: .update(entity: entity, key: key, row: row ?? Row([]), changedColumns: changedColumns)
        case .delete: .delete(entity: entity, key: key)
        }
    }
}
