import Foundation
import Logging
import Metrics
import PostgresNIO
import Strata
import StrataStore
import StrataSynchronization
import Synchronization

/// Keeps one local store a replica of the dataset shared through PostgreSQL: the replicator its
/// saves go through, and what the tail applies from the log.
///
/// A save (synchronous mode) is one PostgreSQL transaction: it takes the head row's lock,
/// applies the log entries the store lacks (so the context's merge policy sees them), then in
/// one statement checks that no object it touches changed in PostgreSQL since and appends
/// itself to the log (``MirrorLogAppend``), and commits;
/// then it commits locally with the cursor in the same local transaction. In asynchronous mode a
/// save commits locally only, and the tail exports it (PostgresMirror+Export.swift).
final class PostgresMirror: PersistentStoreReplicator, Sendable {
    let configuration: MirrorConfiguration
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    let engine: Store
    let location: MirrorState.Location
    let bridge: BlockingBridge
    private let save = Lock(SaveState())
    private let schemaReady = Atomic<Bool>(false)
    private let connectionIDs = Atomic<Int>(0)
    private let merges = DispatchQueue(label: "strata.mirror.merge")
    private let applying = DispatchQueue(label: "strata.mirror.apply")
    private let changesHandler: @Sendable ([ReplicatedChanges]) -> Void
    let metrics: MirrorMetrics
    /// The store's key allocation (see ``MirrorKeys``).
    let keys: MirrorKeys
    /// Wakes the tail (set while it runs): an asynchronous save has something to export.
    let wakeTail = Lock<(@Sendable () -> Void)?>(nil)

    /// Whether saves commit locally first (``MirrorConfiguration/Mode/asynchronous``).
    var asynchronous: Bool { configuration.mode == .asynchronous }

    /// The connection and open transaction of the save in progress.
    private struct SaveState {
        var connection: PostgresConnection?
        /// The head read under its lock by the open transaction (`nil`: none open).
        var head: Int64?
        /// Changes applied by the save's catch-up, merged once the save is over.
        var applied: [ReplicatedChanges] = []
    }

    var logger: Logger { configuration.logger }

    /// Creates the mirror of `store`; `changes` receives what was applied from the log.
    ///
    /// - Throws: ``CoreDataError`` when the store is not a store directory or the model lacks the mirror's entity.
    init(
        configuration: MirrorConfiguration, coordinator: PersistentStoreCoordinator, store: PersistentStore,
        changes: @escaping @Sendable ([ReplicatedChanges]) -> Void
    ) throws {
        guard let engine = store.engineStore else {
            throw CoreDataError(
                .persistentStoreInvalidType, "only a store directory can be mirrored, not \(store.type)")
        }
        self.configuration = configuration
        self.coordinator = coordinator
        self.store = store
        self.engine = engine
        self.location = try MirrorState.Location(coordinator: coordinator)
        self.bridge = BlockingBridge(label: "strata.mirror.\(configuration.instanceName)")
        self.changesHandler = changes
        self.metrics = MirrorMetrics(instance: configuration.instanceName)
        self.keys = MirrorKeys(
            asynchronous: configuration.mode == .asynchronous, blockSize: configuration.keyBlockSize,
            ranges: try location.keys(in: engine))
        keys.setLease { [weak self] entity, count in self?.leaseNow(entity, count: count) }
        try prepareStore()
    }

    /// Creates the cursor object if the store has none (so that a local save never inserts
    /// it), and in asynchronous mode registers the export cursor and the key source.
    private func prepareStore() throws {
        let (location, engine, coordinator, store) = (location, engine, coordinator, store)
        try store.withReplicationLock {
            guard try !engine.contains(location.layout.storeEntity, key: MirrorState.key) else { return }
            var transaction = StrataStore.Transaction(author: "strata.mirror")
            transaction.operations.append(try location.setCursor(0, in: engine))
            _ = try coordinator.applyReplicatedTransaction(transaction, to: store)
        }
        if asynchronous {
            do {
                try engine.registerHistoryConsumer(Self.exportConsumer)
            } catch {
                throw CoreDataError(
                    .persistentStoreOpen, "asynchronous mirroring needs the store's persistent history: \(error)",
                    underlyingError: error)
            }
        }
        engine.keySource = keys
    }

    /// The last log position the local store holds.
    func cursor() throws -> Int64 { try location.cursor(in: engine) }

    /// How long one exchange with PostgreSQL (a save's catch-up, its commit, reading a batch of
    /// the log) may take before its connection is closed under it (see ``PostgresConnection/withDeadline(seconds:on:_:)``).
    static let deadline: Double = 15
    /// The deadline of reading a whole snapshot.
    static let snapshotDeadline: Double = 600

    /// Opens a connection, creating the tables on the first. The server ends a transaction left
    /// idle for a minute and a lock wait after 10 s, so a client that vanished holding the head
    /// lock never blocks the others for long.
    ///
    /// - Parameter executor: where the schema is created (the blocking bridge's for a save).
    func connect(on executor: (any TaskExecutor)? = nil) async throws -> PostgresConnection {
        let id = connectionIDs.add(1, ordering: .relaxed).newValue
        var postgres = configuration.postgres
        for (name, value) in [("idle_in_transaction_session_timeout", "60s"), ("lock_timeout", "10s")]
        where !postgres.options.additionalStartupParameters.contains(where: { $0.0 == name }) {
            postgres.options.additionalStartupParameters.append((name, value))
        }
        let connection = try await PostgresConnection.connect(configuration: postgres, id: id, logger: logger)
        if !schemaReady.load(ordering: .acquiring) {
            do {
                try await connection.withDeadline(seconds: Self.deadline, on: executor) { [self] in
                    try await MirrorSchema.create(on: connection, logger: self.logger)
                }
            } catch {
                try? await connection.close()
                throw error
            }
            schemaReady.store(true, ordering: .releasing)
        }
        return connection
    }

    // MARK: Saves

    func storeWillSave(_ store: PersistentStore) throws {
        if asynchronous { return keys.beginSave() }
        let existing = save.withLock { $0.connection }
        typealias Begun = (PostgresConnection, Int64, [MirrorLogEntry], MirrorSnapshot?)
        let result: Begun
        do {
            // A connection that arrives after the save gave up holds the head lock: close it.
            result = try bridge.run(abandoned: { begun in try? await begun.0.close() }) {
                [self] () async throws -> Begun in
                let connection: PostgresConnection
                if let existing, !existing.isClosed {
                    connection = existing
                } else {
                    connection = try await connect(on: bridge)
                }
                do {
                    return try await connection.withDeadline(seconds: Self.deadline, on: bridge) {
                        [self] () async throws -> Begun in
                        try await connection.send("BEGIN", logger: logger)
                        let head = try await MirrorLogEntry.head(on: connection, forUpdate: true, logger: logger)
                        keys.setFloors(try await MirrorKeys.floors(on: connection, logger: logger))
                        let cursor = try cursor()
                        guard head > cursor else { return (connection, head, [], nil) }
                        let entries = try await MirrorLogEntry.read(
                            after: cursor, limit: Int(head - cursor), on: connection, logger: logger)
                        if entries.first?.position != cursor + 1 {
                            return (
                                connection, head, [],
                                try await MirrorSnapshot.read(on: connection, holdingHead: head, logger: logger)
                            )
                        }
                        return (connection, head, entries, nil)
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        } catch {
            save.withLock { $0 = SaveState() }  // the bridge closed the connection it failed on
            throw unreachable(error)
        }
        save.withLock {
            $0.connection = result.0
            $0.head = result.1
        }
        // The caller holds the store's save lock: apply directly.
        var pending = MirrorPending()
        let applied = try result.3.map { [try apply($0, pending: pending)] } ?? apply(result.2, pending: &pending)
        save.withLock { $0.applied += applied }
    }

    func store(
        _ store: PersistentStore, commit transaction: StrataStore.Transaction,
        locally: (StrataStore.Transaction) throws -> UInt64
    ) throws -> UInt64 {
        if asynchronous { return try commitLocally(transaction, locally: locally) }
        guard let open = save.withLock({ state in state.connection.flatMap { c in state.head.map { (c, $0) } } }) else {
            throw CoreDataError(.persistentStoreSave, "the mirror has no open PostgreSQL transaction for this save")
        }
        let (connection, head) = open
        let position = head + 1
        let origin = configuration.instanceName
        let sequence = Int64(engine.lastSequence + 1)
        let payload: Data
        do {
            payload = try MirrorPayload(
                transaction, deletedRows: try MirrorPairs(engine: engine).deletedRows(transaction.operations)
            ).encoded()
        } catch {
            throw CoreDataError(.persistentStoreSave, "the transaction could not be encoded for the mirror: \(error)")
        }
        do {
            try bridge.run { [self] in
                try await connection.withDeadline(seconds: Self.deadline, on: bridge) { [self] in
                    var append = MirrorLogAppend(origin: origin)
                    append.entries = [
                        MirrorLogAppend.Entry(
                            position: position, originSequence: sequence, author: transaction.author,
                            contextName: transaction.contextName,
                            timestamp: Date(), payload: payload, operations: transaction.operations)
                    ]
                    try await append.save(base: head, on: connection, logger: logger)
                    try await connection.send("COMMIT", logger: logger)
                    save.withLock { $0.head = nil }
                    // After the commit, outside the head lock: a hint for the tails, never relied on.
                    _ = try? await connection.send(
                        "SELECT pg_notify(\(MirrorSchema.channel), \(String(position)))", logger: logger)
                }
            }
        } catch {
            throw unreachable(error)
        }
        metrics.exported.increment()
        logger.debug(
            "exported a transaction",
            metadata: ["position": "\(position)", "operations": "\(transaction.operations.count)"])
        var local = transaction
        local.operations.append(try location.setCursor(position, in: engine))
        // If this fails, the transaction is in the log and the next catch-up applies it.
        return try locally(local)
    }

    func storeDidEndSave(_ store: PersistentStore) {
        let (connection, open, applied) = save.withLock { state in
            defer {
                state.head = nil
                state.applied = []
            }
            return (state.connection, state.head != nil, state.applied)
        }
        if open, let connection {
            // Closing the connection rolls the transaction back, without waiting on a server
            // that may be gone; the next save connects again.
            save.withLock { $0.connection = nil }
            _ = try? bridge.run(timeout: 5) { try await connection.close() }
        }
        deliver(applied)
    }

    /// The error a save fails with.
    private func unreachable(_ error: any Error) -> CoreDataError {
        metrics.failedSaves.increment()
        if let error = error as? CoreDataError { return error }
        if let error = error as? MirrorError {
            if case .versionConflict = error {
                return CoreDataError(
                    .managedObjectMerge, "optimistic locking failure in the PostgreSQL mirror: \(error)",
                    underlyingError: error)
            }
            return CoreDataError(
                .persistentStoreSave, "the PostgreSQL mirror refused the save: \(error)", underlyingError: error)
        }
        logger.warning("a save could not reach PostgreSQL", metadata: ["error": "\(String(reflecting: error))"])
        return CoreDataError(
            .persistentStoreSave,
            "the PostgreSQL mirror is unreachable; nothing was saved: \(String(reflecting: error))",
            underlyingError: error)
    }

    // MARK: Applying the log

    /// Applies `entries` after the store's cursor (call holding the store's save lock): each
    /// run of consecutive entries with the same author and context name (up to
    /// ``maximumOperationsPerApply`` operations) as one local transaction that also moves the
    /// cursor past its last entry, so a crash applies a run in full or not at all, and one
    /// durable commit serves the whole run. Over `pending` local saves (asynchronous mode) the
    /// entries change only what those saves did not: they come later in the log. An entry this
    /// instance exported itself is already in the store: only the cursor passes it.
    ///
    /// - Throws: ``MirrorError/cursorBelowLog(cursor:oldest:)`` when an entry is missing.
    func apply(_ entries: [MirrorLogEntry], pending: inout MirrorPending) throws -> [ReplicatedChanges] {
        var cursor = try cursor()
        var applied: [ReplicatedChanges] = []
        var run: [MirrorLogEntry] = []
        var transaction = StrataStore.Transaction()
        var staged = MirrorStaged()
        func commitRun() throws {
            guard let last = run.last else { return }
            transaction.operations.append(try location.setCursor(last.position, in: engine))
            if asynchronous {
                transaction.consumerCursors[Self.exportConsumer] = pending.exported(through: engine.lastSequence)
            }
            transaction.durability = Self.appliedDurability
            applied.append(try coordinator.applyReplicatedTransaction(transaction, to: store))
            let now = Date()
            for entry in run {
                metrics.lag.recordNanoseconds(Int64(max(0, now.timeIntervalSince(entry.timestamp)) * 1e9))
            }
            metrics.applied.increment(by: run.count)
            (run, staged) = ([], MirrorStaged())
        }
        for entry in entries where entry.position > cursor {
            guard entry.position == cursor + 1 else {
                throw MirrorError.cursorBelowLog(cursor: cursor, oldest: entry.position)
            }
            if let first = run.first,
                first.author != entry.author || first.contextName != entry.contextName
                    || transaction.operations.count >= Self.maximumOperationsPerApply
            {
                try commitRun()
            }
            if run.isEmpty {
                transaction = StrataStore.Transaction(author: entry.author, contextName: entry.contextName)
            }
            if asynchronous && entry.origin == configuration.instanceName {
                pending.drop(through: UInt64(entry.originSequence))
            } else {
                let payload = try MirrorPayload.decode(entry.payload)
                transaction.operations += try resolve(
                    try payload.engineOperations(), over: pending, staged: &staged, deletedRows: payload.deletedRows())
            }
            run.append(entry)
            cursor = entry.position
        }
        try commitRun()
        if !applied.isEmpty {
            metrics.cursor.record(cursor)
            logger.debug("applied log entries", metadata: ["transactions": "\(applied.count)", "cursor": "\(cursor)"])
        }
        return applied
    }

    /// The durability of what the mirror commits locally from PostgreSQL (applied log entries
    /// with the cursor, a snapshot, the export record): relaxed, since PostgreSQL holds it all.
    /// A power loss that takes the newest of these commits takes the cursor with them, and the
    /// tail applies those entries again (an own entry only moves the cursors); a later durable
    /// commit (a save) makes them durable too. Saves keep the store's durability.
    static let appliedDurability = Durability.relaxed

    /// The most operations one local transaction of ``apply(_:pending:)`` gathers (a run ends
    /// at the entry that passes it).
    static let maximumOperationsPerApply = 16_384

    /// The local operations that apply `operations` from the log: an update writes only the
    /// columns it changed, onto the local row; an update or delete of an object the store no
    /// longer has does nothing; an insert of an object it has is an update. What `pending` saves
    /// changed is left alone (a pending insert or delete, the whole object). Join rows apply per
    /// pair (``MirrorPairs``).
    ///
    /// - Parameters:
    ///   - staged: what the operations resolved before these (in the same local transaction)
    ///     left; a snapshot starts it with the store's rows.
    ///   - deletedRows: the rows of deleted join rows, by object (the log entry's).
    func resolve(
        _ operations: [StrataStore.Operation], over pending: MirrorPending, staged stagedState: inout MirrorStaged,
        deletedRows: [ObjectKey: Row] = [:]
    ) throws -> [StrataStore.Operation] {
        var staged = stagedState.rows, stagedPairs = stagedState.pairs
        defer { stagedState = MirrorStaged(rows: staged, pairs: stagedPairs) }
        func current(_ object: ObjectKey) throws -> Row? {
            if let row = staged[object] { return row }
            return try engine.read(object.entity, key: object.key)
        }
        let pairs = MirrorPairs(engine: engine)
        var resolved: [StrataStore.Operation] = []
        resolved.reserveCapacity(operations.count)
        for operation in operations {
            let object = ObjectKey(entity: operation.entity, key: operation.key)
            if case .delete(let entity, _) = operation, let row = deletedRows[object] {
                // The pair goes, under whichever keys the store holds it (but what pending saves made).
                let pair = MirrorPairs.Pair(entity: entity, row: row)
                let held = try pairs.keys(of: pair, current: current, staged: stagedPairs[pair] ?? [])
                for key in held.sorted() where pending.protectedColumns(of: ObjectKey(entity: entity, key: key)) != nil
                {
                    resolved.append(.delete(entity: entity, key: key))
                    staged[ObjectKey(entity: entity, key: key)] = .some(nil)
                    stagedPairs[pair]?.remove(key)
                }
                continue
            }
            guard let kept = pending.protectedColumns(of: object) else { continue }
            var changed: [Int]
            let image: Row
            switch operation {
            case .delete:
                guard try current(object) != nil else { continue }
                resolved.append(operation)
                staged[object] = .some(nil)
                continue
            case .insert(let entity, _, let row):
                guard let existing = try current(object) else {
                    if pairs.isJoin(entity) {
                        // A pair the store already holds under another key stays as it is.
                        let pair = MirrorPairs.Pair(entity: entity, row: row)
                        guard try pairs.keys(of: pair, current: current, staged: stagedPairs[pair] ?? []).isEmpty else {
                            continue
                        }
                        stagedPairs[pair, default: []].insert(object.key)
                    }
                    resolved.append(operation)
                    staged[object] = row
                    continue
                }
                changed = row.values.indices.filter { existing[$0] != row[$0] }
                image = row
            case .update(_, _, let row, let columns):
                changed = columns
                image = row
            }
            guard var merged = try current(object) else { continue }
            changed = changed.filter { !kept.contains($0) }
            guard !changed.isEmpty else { continue }
            for column in changed { merged[column] = image[column] }
            resolved.append(.update(entity: object.entity, key: object.key, row: merged, changedColumns: changed))
            staged[object] = merged
        }
        return resolved
    }

    /// Makes the store hold exactly `snapshot`, but for what `pending` local saves changed (call
    /// holding the store's save lock): one local transaction with the cursor at the snapshot's position.
    func apply(_ snapshot: MirrorSnapshot, pending: MirrorPending) throws -> ReplicatedChanges {
        var transaction = StrataStore.Transaction(author: "strata.mirror.bootstrap")
        for entity in engine.schema.entities.indices where entity != location.layout.storeEntity {
            let remote = snapshot.rows[entity] ?? [:]
            var local: [ObjectKey: Row] = [:]
            try engine.scan(entity) { key, row in local[ObjectKey(entity: entity, key: key)] = row }
            var operations: [StrataStore.Operation] = local.keys.filter { remote[$0.key] == nil }.sorted {
                $0.key < $1.key
            }
            .map { .delete(entity: entity, key: $0.key) }
            operations += remote.sorted { $0.key < $1.key }.map { .insert(entity: entity, key: $0.key, row: $0.value) }
            var staged = MirrorStaged(storeRows: local)
            transaction.operations += try resolve(operations, over: pending, staged: &staged)
        }
        transaction.operations.append(try location.setCursor(snapshot.position, in: engine))
        if asynchronous {
            transaction.consumerCursors[Self.exportConsumer] = pending.exported(through: engine.lastSequence)
        }
        transaction.durability = Self.appliedDurability
        let changes = try coordinator.applyReplicatedTransaction(transaction, to: store)
        metrics.bootstraps.increment()
        metrics.cursor.record(snapshot.position)
        logger.notice(
            "bootstrapped the local store from a snapshot",
            metadata: [
                "position": "\(snapshot.position)", "operations": "\(transaction.operations.count - 1)",
            ])
        return changes
    }

    /// Reads the log after the store's cursor and applies it (the tail's step): bootstraps from
    /// a snapshot when the log was pruned past the cursor.
    ///
    /// - Returns: whether anything was applied.
    @discardableResult
    func catchUp(on connection: PostgresConnection) async throws -> Bool {
        let cursor = try cursor()
        // Entries commit in log order (under the head lock), so a read sees a gap-free prefix of
        // the log: one that starts right after the cursor is all it takes. Otherwise the head
        // first: entries up to it are committed, so an empty or late start means pruned.
        let (head, entries) = try await connection.withDeadline(seconds: Self.deadline) {
            [self] () async throws -> (Int64, [MirrorLogEntry]) in
            let entries = try await MirrorLogEntry.read(
                after: cursor, limit: configuration.batchSize, on: connection, logger: logger)
            if let last = entries.last, entries.first?.position == cursor + 1 { return (last.position, entries) }
            let head = try await MirrorLogEntry.head(on: connection, forUpdate: false, logger: logger)
            guard head > cursor else { return (head, []) }
            return (
                head,
                try await MirrorLogEntry.read(
                    after: cursor, limit: configuration.batchSize, on: connection, logger: logger)
            )
        }
        guard head > cursor else { return false }
        let applied: [ReplicatedChanges]
        if entries.first?.position == cursor + 1 {
            applied = try await underReplicationLock {
                do {
                    var pending = try self.pendingSaves()
                    return try self.apply(entries, pending: &pending)
                } catch MirrorError.cursorBelowLog {
                    return []  // a save applied a snapshot meanwhile; the next step reads on from it
                }
            }
        } else {
            logger.notice(
                "the shared log was pruned past this instance's cursor: re-bootstrapping",
                metadata: [
                    "cursor": "\(cursor)", "oldest": "\(entries.first.map { String($0.position) } ?? "none")",
                ])
            let snapshot = try await connection.withDeadline(seconds: Self.snapshotDeadline) { [self] in
                try await MirrorSnapshot.read(on: connection, holdingHead: nil, logger: logger)
            }
            applied = try await underReplicationLock {
                try self.cursor() < snapshot.position
                    ? [try self.apply(snapshot, pending: try self.pendingSaves())] : []
            }
        }
        deliver(applied)
        return !applied.isEmpty
    }

    /// Runs `body` holding the store's save lock on the mirror's apply queue: a save may hold
    /// the lock while it waits for PostgreSQL, and the waiting must not take a thread of the
    /// cooperative pool.
    func underReplicationLock<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            applying.async { [store] in continuation.resume(with: Result { try store.withReplicationLock(body) }) }
        }
    }

    /// Records this instance's cursor in PostgreSQL, for pruning.
    func heartbeat(on connection: PostgresConnection) async throws {
        let cursor = try cursor()
        try await connection.send(
            """
            INSERT INTO strata_instance (origin, pos, seen) VALUES (\(configuration.instanceName), \(cursor), now())
            ON CONFLICT (origin) DO UPDATE SET pos = EXCLUDED.pos, seen = now()
            """, logger: logger)
    }

    /// Hands applied changes to the handler off the caller's thread, in order.
    func deliver(_ changes: [ReplicatedChanges]) {
        guard !changes.isEmpty else { return }
        let handler = changesHandler
        merges.async { handler(changes) }
    }
}
