import StrataStore

/// The pairs of to-many relationships kept in join entities (columns `source`, `target`,
/// `position`; see the object graph's store mapping). A pair is what a relationship holds, its
/// row key only where it happens to be stored: two asynchronous instances adding the same pair
/// while apart each store it under a key of their own. The mirror therefore applies join rows
/// per pair: an insert of a pair the store holds is skipped, and a delete removes the pair
/// whatever key the store holds it under (the log carries a deleted join row's pair for that).
struct MirrorPairs {
    /// One pair of one join entity.
    struct Pair: Hashable {
        var entity: Int
        var source: Value
        var target: Value

        init(entity: Int, row: Row) {
            self.entity = entity
            source = row[0]
            target = row[1]
        }
    }

    let engine: Store

    /// Whether `entity` is a join entity.
    func isJoin(_ entity: Int) -> Bool {
        engine.schema.entities.indices.contains(entity) && engine.schema.entities[entity].name.hasPrefix("_join_")
    }

    /// The rows of deleted join rows among `operations`, read from the store before they are
    /// deleted, so the log carries each deleted pair (call holding the store's save lock).
    func deletedRows(_ operations: [StrataStore.Operation]) throws -> [ObjectKey: Row] {
        var rows: [ObjectKey: Row] = [:]
        for case .delete(let entity, let key) in operations where isJoin(entity) {
            if let row = try engine.read(entity, key: key) { rows[ObjectKey(entity: entity, key: key)] = row }
        }
        return rows
    }

    /// The keys under which the store holds `pair`, as `current` sees each row (the rows staged
    /// by the operations resolved so far), plus `staged` keys inserted by them.
    func keys(of pair: Pair, current: (ObjectKey) throws -> Row?, staged: Set<Int64>) throws -> Set<Int64> {
        var keys = staged
        for key in try engine.keys(pair.entity, column: 0, matching: .equal(pair.source)) where !keys.contains(key) {
            if let row = try current(ObjectKey(entity: pair.entity, key: key)), row[1] == pair.target {
                keys.insert(key)
            }
        }
        return keys
    }
}

/// What the operations resolved so far for one local transaction left (``PostgresMirror``'s
/// `resolve`): later operations of the same transaction see it rather than the store.
struct MirrorStaged {
    /// The rows written (`nil`: deleted), by object.
    var rows: [ObjectKey: Row?] = [:]
    /// The keys of join rows inserted, by pair.
    var pairs: [MirrorPairs.Pair: Set<Int64>] = [:]

    init(rows: [ObjectKey: Row?] = [:], pairs: [MirrorPairs.Pair: Set<Int64>] = [:]) {
        self.rows = rows
        self.pairs = pairs
    }

    /// Starts from rows already read (a snapshot passes the store's).
    init(storeRows rows: [ObjectKey: Row]) {
        self.rows = rows.mapValues { Optional($0) }
    }
}
