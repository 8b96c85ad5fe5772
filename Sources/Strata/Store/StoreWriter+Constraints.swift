import StrataStore

extension StoreWriter {
    /// The ID of a stored object of `owner` (the entity declaring the constraint) or a
    /// sub-entity, other than `object`, whose constrained columns hold `values`: the uniqueness
    /// read of a save. Objects `isSettled` says the save changes (deleted, or changed away from
    /// their stored values) are no conflict and are passed over.
    ///
    /// - Throws: ``CoreDataError`` when a value cannot be stored or the store cannot be read.
    func storedObject(
        matching constraint: [String], of owner: EntityDescription, values: [Any?], of object: ManagedObject,
        isSettled: (ManagedObjectID) -> Bool
    ) throws -> ManagedObjectID? {
        let layout = try coordinator.layout(object.entity)
        let columns = constraint.compactMap { layout.columns[$0] }
        guard columns.count == constraint.count else { return nil }
        let attributes = constraint.map { object.entity.attributesByName[$0] }
        guard let first = attributes[0] else { return nil }
        let wanted = try ValueConversion.storeValue(values[0], for: first)
        let candidates = try coordinator.storeCall {
            try store.rows.keys(layout.storeEntity, column: columns[0], matching: .equal(wanted), descending: false, limit: nil)
        }
        for key in candidates where object.objectID.isTemporaryID || key != object.objectID.primaryKey {
            guard let row = try coordinator.storeCall({ try store.rows.read(layout.storeEntity, key: key) }),
                let concrete = try coordinator.concreteEntity(of: row, storeEntity: layout.storeEntity), concrete.isKindOf(entity: owner)
            else { continue }
            let id = ManagedObjectID(entity: concrete, storeIdentifier: store.identifier, primaryKey: key)
            if isSettled(id) { continue }
            let matches = try zip(attributes, zip(columns, values)).allSatisfy { attribute, pair in
                guard let attribute else { return false }
                return try ValueConversion.storeValue(pair.1, for: attribute) == row[pair.0]
            }
            if matches { return id }
        }
        return nil
    }
}
