internal import StrataStore

/// Looks up the stored rows whose columns hold the values of a uniqueness constraint: the one
/// lookup by constraint values of the store layer, behind a save's constraint check
/// (``StoreWriter/storedObject(matching:of:values:of:isSettled:)``) and a batch request's
/// (``BatchConstraints``).
///
/// The candidates are the rows the engine's index of the constraint's first column gives for its
/// value; each is read, and matches when its concrete entity is the constraint's owner or a
/// sub-entity and every constrained column holds its value.
struct UniquenessLookup {
    /// The store read.
    let store: PersistentStore
    /// The coordinator whose mapping lays out the store's rows.
    let coordinator: PersistentStoreCoordinator
    /// The engine entity holding the rows of the constrained entity's hierarchy.
    let storeEntity: Int

    /// The first row, in key order, of `owner` (the entity declaring the constraint) or a
    /// sub-entity whose `columns` hold `values`, with its concrete entity.
    ///
    /// - Parameters:
    ///   - excluding: the keys of rows that are no match whatever they hold (the row checked,
    ///     rows its writer replaces), never read.
    ///   - isSettled: whether a matching row (its key and concrete entity) is no conflict after
    ///     all (an object the save deletes or changes away from its stored values).
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store cannot be read.
    func firstRow(
        of owner: EntityDescription, columns: [Int], values: [Value], excluding: Set<PrimaryKey>,
        isSettled: (PrimaryKey, EntityDescription) -> Bool = { _, _ in false }
    ) throws -> (key: PrimaryKey, entity: EntityDescription)? {
        let candidates = try coordinator.storeCall {
            try store.rows.keys(
                storeEntity, column: columns[0], matching: .equal(values[0]), descending: false, limit: nil)
        }
        for key in candidates where !excluding.contains(key) {
            guard let row = try coordinator.storeCall({ try store.rows.read(storeEntity, key: key) }),
                let concrete = try coordinator.concreteEntity(of: row, storeEntity: storeEntity),
                concrete.isKindOf(entity: owner), zip(columns, values).allSatisfy({ row[$0] == $1 }),
                !isSettled(key, concrete)
            else { continue }
            return (key, concrete)
        }
        return nil
    }
}
