internal import StrataStore

/// The concrete entities of the objects one history record's relationship changes name (the
/// owners of to-many relationships whose pairs or inverse to-one columns the record changed),
/// each worked out once per record: from the record's change of the object's row, else from its
/// stored row.
///
/// A record that changes many rows pointing at few objects (a bulk insert of employees into a
/// handful of departments) asks for the same owners again and again: each is looked up once,
/// and the record's changes are found by key through a table instead of a search per owner,
/// which made such records quadratic.
struct HistoryRecordEntities {
    /// An engine entity and a primary key.
    private struct Key: Hashable {
        var storeEntity: Int
        var key: PrimaryKey
    }

    /// Records with more changes than this find a row's change through `positions`; smaller ones
    /// search their changes (cheaper than building a table).
    private static let searchLimit = 16

    /// The record whose changes are looked in first.
    let record: HistoryTransaction
    /// The store whose rows are read for the objects the record did not change.
    let store: PersistentStore
    /// By engine entity, its entities by tag.
    let entitiesByTag: [Int: [Int64: EntityDescription]]
    /// The position of the first change of each row the record changed, made on the first
    /// lookup in a record of more than ``searchLimit`` changes.
    private var positions: [Key: Int]?
    /// The answers given so far.
    private var answers: [Key: EntityDescription?] = [:]

    /// Lookups for the objects `record` of `store` names, with `mapping`'s entity tags.
    init(record: HistoryTransaction, store: PersistentStore, mapping: StoreMapping) {
        self.record = record
        self.store = store
        entitiesByTag = mapping.entitiesByTag
    }

    /// The concrete entity of the object `key` of the engine entity `storeEntity`: from the
    /// record's change of its row, else from its stored row; `nil` when neither tells.
    mutating func entity(of key: PrimaryKey, in storeEntity: Int) -> EntityDescription? {
        let id = Key(storeEntity: storeEntity, key: key)
        if let known = answers[id] { return known }
        let row =
            change(of: id).flatMap { $0.row ?? $0.previousRow ?? $0.tombstone }
            ?? (try? store.rows.read(storeEntity, key: key)) ?? nil
        var entity: EntityDescription?
        if let row, case .int(let tag) = row[0] { entity = entitiesByTag[storeEntity]?[tag] }
        answers[id] = entity
        return entity
    }

    /// The record's first change of the row `id`, if any.
    private mutating func change(of id: Key) -> HistoryChange? {
        let changes = record.changes
        guard changes.count > Self.searchLimit else {
            return changes.first { $0.entity == id.storeEntity && $0.key == id.key }
        }
        if let positions { return positions[id].map { changes[$0] } }
        var table: [Key: Int] = [:]
        table.reserveCapacity(changes.count)
        for (position, change) in changes.enumerated() {
            let key = Key(storeEntity: change.entity, key: change.key)
            if table[key] == nil { table[key] = position }
        }
        positions = table
        return table[id].map { changes[$0] }
    }
}
