import Foundation
internal import StrataStore

/// A stored row a fetch matched, not made an object yet.
struct StoredMatch {
    /// The position of the row's store in the coordinator's stores.
    var store: Int
    /// The row's primary key.
    var key: PrimaryKey
    /// The row's entity tag, when the row was read.
    var tag: Int64?
    /// The row, when it was read (an engine store's as its encoded bytes when the fetch asked
    /// for rows only to load objects from).
    var row: StoredRow?
}

/// The stores and sequences one fetch reads.
struct FetchStores {
    /// The coordinator's stores, in order, as the fetching context reads them.
    var stores: [PersistentStore]
    /// Each store's newest sequence, read before its rows.
    var sequences: [UInt64]
}

/// One batch of rows a walk read: the rows passing, in the order of their keys (`nil` where no
/// row is or it does not pass), how many rows were read, and whether one was past the walk's
/// boundary.
struct WalkBatch {
    /// The rows passing.
    var rows: [StoredRow?]
    /// The number of rows read.
    var read: Int
    /// Whether a row read had a sort key past the walk's boundary.
    var pastBoundary: Bool
}

/// Evaluates a part of a fetch's residual predicate that no column test answers on a stored
/// row (key paths through relationships, blocks): the context's evaluator, which sees its
/// objects.
typealias ResidualEvaluation = (_ part: FetchPredicate, _ row: Row, _ key: PrimaryKey, _ concrete: ConcreteEntity)
    throws -> Bool

extension StoreReader {
    /// Calls `emit` with every stored row of this store `plan` matches, leaving out the rows at
    /// `skip` (objects whose unsaved state the context evaluates in memory).
    ///
    /// - Parameters:
    ///   - position: the store's position in the fetch's ``FetchStores``.
    ///   - evaluate: evaluates residual parts no column test answers.
    ///   - rowsNeeded: whether the caller reads the matches' rows; when not (IDs, objects
    ///     returned as faults), an ordered walk decodes only the columns it tests and emits its
    ///     matches without their row.
    ///   - encodedRows: whether the caller reads the rows only to load objects from them: an
    ///     engine store's rows are then emitted as their encoded bytes, not decoded first, unless
    ///     the general evaluator needs them decoded.
    func executeFetch(
        _ plan: QueryPlan, position: Int, skip: Set<PrimaryKey>, rowsNeeded: Bool = true, encodedRows: Bool = false,
        evaluate: ResidualEvaluation,
        emit: (consuming StoredMatch) throws -> Void
    ) throws {
        let storeEntity = plan.layout.storeEntity
        let columns = try coordinator.mapping.get().schema.entities[storeEntity].columns
        let filter = plan.residual.map {
            RowFilter($0, entity: plan.entity, layout: plan.layout, columns: columns, store: store)
        }
        let tests = filter.flatMap(ColumnTests.init)
        // A count needs only the entity tag and the columns the filter tests.
        let projection = plan.counting ? (filter.map { $0.columns } ?? []).map { [0] + $0.sorted() } : nil
        // A walk whose rows the caller does not read decodes the tag, the sort key and the
        // columns the filter tests (every column when a part needs the general evaluator).
        var walkColumns: [Int]?
        if case .walk(let walk) = plan.source, !rowsNeeded {
            walkColumns = (filter.map { $0.columns } ?? []).map { [0, walk.column] + $0.sorted() }
        }
        let keepsRows = walkColumns == nil
        // The engine store whose rows are read encoded.
        let engine =
            encodedRows && rowsNeeded && !plan.counting && (filter == nil || tests != nil) ? store.engineStore : nil
        /// Whether a row with this tag and key is of a fetched entity and not skipped.
        func takes(_ key: PrimaryKey, tag: Value) -> Bool {
            guard case .int(let tag) = tag else { return false }
            return plan.fetches(tag: tag) && (skip.isEmpty || !skip.contains(key))
        }
        /// Whether the row whose columns `value` reads is taken and passes the column tests: what
        /// an engine store's rows are taken by while they are read in place, so that only those
        /// passing are copied.
        func passesTests(_ key: PrimaryKey, _ value: (Int) throws -> Value) throws -> Bool {
            try takes(key, tag: value(0)) && (tests?.matches(value: value) ?? true)
        }
        /// Whether the row is taken and meets the residual predicate.
        func passes(_ key: PrimaryKey, _ row: StoredRow) throws -> Bool {
            let tag = row[0]
            guard takes(key, tag: tag) else { return false }
            if let tests { return tests.matches(row) }
            guard let filter, case .int(let tag) = tag, let concrete = plan.concrete(tag: tag) else { return true }
            let decoded = row.row
            return try filter.matches(decoded, evaluate: { part in try evaluate(part, decoded, key, concrete) })
        }
        /// Emits a row that passed.
        func emitPassed(_ key: PrimaryKey, _ row: consuming StoredRow) throws {
            guard case .int(let tag) = row[0] else { return }
            try emit(StoredMatch(store: position, key: key, tag: tag, row: keepsRows ? consume row : nil))
        }
        try coordinator.storeCall {
            switch plan.source {
            case .nothing:
                break
            case .scan:
                if let engine {
                    try engine.scanEncoded(storeEntity, where: { key, row in try passesTests(key) { row.value($0) } }) {
                        key, row in
                        try emitPassed(key, .encoded(consume row))
                    }
                } else {
                    try store.rows.scan(storeEntity, columns: projection) { key, row in
                        if try passes(key, .decoded(row)) { try emitPassed(key, .decoded(row)) }
                    }
                }
            case .index(let access):
                let keys = try access.keys(in: store, storeEntity: storeEntity)
                guard plan.readsRows else {
                    for key in keys where !skip.contains(key) {
                        try emit(StoredMatch(store: position, key: key, tag: nil, row: nil))
                    }
                    return
                }
                if let engine {
                    try engine.forEachEncodedRow(
                        storeEntity, keys: keys, where: { key, row in try passesTests(key) { row.value($0) } }
                    ) { key, row in
                        try emitPassed(key, .encoded(consume row))
                    }
                } else {
                    try store.rows.forEachRow(storeEntity, keys: keys, columns: projection) { key, row in
                        if try passes(key, .decoded(row)) { try emitPassed(key, .decoded(row)) }
                    }
                }
            case .walk(let walk):
                try self.walk(walk, storeEntity: storeEntity, emit: emitPassed) { keys, boundary in
                    try walkBatch(
                        keys, entity: storeEntity, sortColumn: walk.column, boundary: boundary, columns: walkColumns,
                        engine: engine,
                        passesTests: passesTests, passes: passes)
                }
            }
        }
    }

    /// The number of this store's rows `plan` matches, from the fetch indexes alone, leaving out
    /// the rows at `skip`: for a plan whose index access answers the predicate exactly
    /// (`.index` source, no row read).
    func countFromIndexes(_ access: IndexAccess, plan: QueryPlan, skip: Set<PrimaryKey>) throws -> Int {
        guard skip.isEmpty else {
            return try access.keys(in: store, storeEntity: plan.layout.storeEntity).count { !skip.contains($0) }
        }
        return try access.count(in: store, storeEntity: plan.layout.storeEntity)
    }

    /// Walks the index of a walk's sort key in order, emitting each row `readBatch` passes until
    /// `walk.needed` rows were emitted and the key's value changes (rows tied with the last
    /// emitted one may sort before it on later keys).
    ///
    /// The index is read per query as far as the walk can need: at first enough keys for
    /// `walk.needed` rows when at least one row in ``walkReach`` passes, then, each time
    /// those are used, ``walkGrowth`` times as many. Rows are read in batches sized from the share
    /// of rows passing so far (so that few rows are read past the last one needed), by
    /// `readBatch`, given the sort key's value rows must have once the walk has its rows.
    private func walk(
        _ walk: QueryPlan.Walk, storeEntity: Int, emit: (PrimaryKey, consuming StoredRow) throws -> Void,
        readBatch: (_ keys: [PrimaryKey], _ boundary: Value?) throws -> WalkBatch
    ) throws {
        var accepted = 0
        var read = 0
        var boundary: Value?
        for query in walk.queries(in: store) {
            var reach =
                walk.needed.multipliedReportingOverflow(by: Self.walkReach).overflow
                ? Int.max : walk.needed * Self.walkReach + 64
            var keys = try store.rows.keys(
                storeEntity, column: walk.column, matching: query, descending: walk.descending, limit: reach)
            var reachedEnd = keys.count < reach
            var done = 0
            while true {
                if done == keys.count {
                    // Past the reach: eight times as many keys (the same first ones, then more).
                    guard !reachedEnd else { break }
                    reach = reach > Int.max / Self.walkGrowth ? Int.max : reach * Self.walkGrowth
                    keys = try store.rows.keys(
                        storeEntity, column: walk.column, matching: query, descending: walk.descending,
                        limit: reach == Int.max ? nil : reach)
                    reachedEnd = reach == Int.max || keys.count < reach
                    guard done < keys.count else { break }
                }
                // The rows still needed at the share passing so far (at first, all rows), plus a
                // margin; at most 8 times the rows read so far, and at least 16.
                let remaining = Double(max(walk.needed - accepted, 1))
                let estimate = accepted > 0 ? remaining * Double(read) / Double(accepted) : remaining
                let size = Int(max(16, min(estimate * 1.125 + 8, 8 * Double(max(read, walk.needed)), 1e12)))
                let fresh = Array(keys[done..<min(keys.count, done + size)])
                done += fresh.count
                var batch = try readBatch(fresh, boundary)
                read += batch.read
                for (position, key) in fresh.enumerated() {
                    // Moved out of the batch, not copied: the row moves on into its object.
                    guard let row = batch.rows[position].take() else { continue }
                    // Read only where a boundary is tested or set; before `emit`, which takes the row.
                    let sortKey = boundary != nil || accepted + 1 >= walk.needed ? row[walk.column] : nil
                    if let boundary, let sortKey, boundary < sortKey || sortKey < boundary { return }
                    try emit(key, row)
                    accepted += 1
                    if accepted >= walk.needed, boundary == nil { boundary = sortKey }
                }
                // Every later key sorts past the boundary too.
                if batch.pastBoundary { return }
            }
        }
    }

    /// The rows at `keys` that pass, in the order of `keys` (`nil` where none is or it does not
    /// pass), with at least `columns` decoded (every column when `nil`), or encoded when
    /// `engine` is given: a small batch of a current store through the row cache
    /// (``cachedRows(_:keys:engine:)``), a larger one tested in place by `passesTests` and only
    /// the rows passing copied; each block read once. With a `boundary`, a row whose
    /// `sortColumn` has another value does not pass, and the batch notes it was past the boundary.
    private func walkBatch(
        _ keys: [PrimaryKey], entity: Int, sortColumn: Int, boundary: Value?, columns: [Int]?, engine: Store?,
        passesTests: (PrimaryKey, (Int) throws -> Value) throws -> Bool, passes: (PrimaryKey, StoredRow) throws -> Bool
    ) throws -> WalkBatch {
        var read = 0
        var pastBoundary = false
        /// Whether the row whose sort key `value` reads is past the boundary (and notes it when
        /// it is).
        func isPastBoundary(_ value: (Int) -> Value) -> Bool {
            guard let boundary else { return false }
            let key = value(sortColumn)
            guard boundary < key || key < boundary else { return false }
            pastBoundary = true
            return true
        }
        var rows: [StoredRow?]
        if let engine, isCurrent, keys.count <= Self.cachedWalkBatch {
            // Through the row cache, as faults read: a walk's rows are the same from one query to
            // the next while the store does not change.
            rows = try cachedRows(entity, keys: keys, engine: engine)
        } else if let engine {
            rows = try engine.readEncoded(entity, keys: keys) { key, row in
                read += 1
                return try !isPastBoundary { row.value($0) } && passesTests(key) { row.value($0) }
            }.map { $0.map(StoredRow.encoded) }
            return WalkBatch(rows: rows, read: read, pastBoundary: pastBoundary)
        } else {
            rows = try self.rows(entity, keys: keys, columns: columns)
        }
        for index in rows.indices {
            guard let row = rows[index] else { continue }
            read += 1
            if try isPastBoundary({ row[$0] }) || !passes(keys[index], row) { rows[index] = nil }
        }
        return WalkBatch(rows: rows, read: read, pastBoundary: pastBoundary)
    }

    /// The rows of the engine entity `entity` at `keys`, in that order (`nil` where none is), as
    /// their encoded bytes: those the coordinator's row cache holds as of the store's newest
    /// sequence from it, the others read from `engine` (each block once) and kept there.
    private func cachedRows(_ entity: Int, keys: [PrimaryKey], engine: Store) throws -> [StoredRow?] {
        let sequence = store.rows.lastSequence
        var rows = coordinator.rowCache.rows(store, entity: entity, keys: keys, sequence: sequence)
        let missing = rows.indices.filter { rows[$0] == nil }
        guard !missing.isEmpty else { return rows }
        let read = try engine.readEncoded(entity, keys: missing.map { keys[$0] })
        var kept: [(key: PrimaryKey, row: StoredRow)] = []
        kept.reserveCapacity(missing.count)
        for (position, row) in zip(missing, read) {
            guard let row else { continue }
            rows[position] = .encoded(row)
            kept.append((keys[position], .encoded(row)))
        }
        coordinator.rowCache.keep(kept, store, entity: entity, sequence: sequence)
        return rows
    }

    /// The rows at `keys`, in that order (`nil` where none is), with at least `columns` decoded
    /// (every column when `nil`); each block read once.
    private func rows(_ entity: Int, keys: [PrimaryKey], columns: [Int]?) throws -> [StoredRow?] {
        guard let columns else { return try store.rows.read(entity, keys: keys).map { $0.map(StoredRow.decoded) } }
        var positions: [PrimaryKey: Int] = [:]
        positions.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { positions[key] = position }
        var rows = [StoredRow?](repeating: nil, count: keys.count)
        try store.rows.forEachRow(entity, keys: keys, columns: columns) { key, row in
            if let position = positions[key] { rows[position] = .decoded(row) }
        }
        return rows
    }

    /// The most keys a walk's batch reads through the row cache (``cachedRows(_:keys:engine:)``,
    /// every row copied and kept); larger batches, mostly of rows a selective predicate rejects,
    /// test the rows in place and copy only those passing.
    static let cachedWalkBatch = 1024

    /// How many keys per row needed a walk reads from the index at first: enough when at least
    /// one row in this many is accepted (a walk whose rows are all accepted uses half of them).
    static let walkReach = 2

    /// How many times more keys a walk reads from the index each time it used those it read: a
    /// walk that accepts few rows reads the index's first keys again a few times, not once per
    /// batch of rows.
    static let walkGrowth = 8
}
