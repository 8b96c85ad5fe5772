internal import StrataStore

extension StoreWriter {
    /// The ID of a stored object of `owner` (the entity declaring the constraint) or a
    /// sub-entity, other than `object`, whose constrained columns hold `values`: the uniqueness
    /// read of a save (``UniquenessLookup``). A constrained to-one relationship matches by the
    /// related object's ID, as Core Data compares it. Objects `isSettled` says the save changes
    /// (deleted, or changed away from their stored values) are no conflict and are passed over.
    ///
    /// - Throws: ``CoreDataError`` when a value cannot be stored or the store cannot be read.
    func storedObject(
        matching constraint: [String], of owner: EntityDescription, values: [Any?], of object: ManagedObject,
        isSettled: (ManagedObjectID) -> Bool
    ) throws -> ManagedObjectID? {
        let layout = try coordinator.layout(object.entity)
        let columns = constraint.compactMap { layout.columns[$0] }
        guard columns.count == constraint.count else { return nil }
        var wanted: [Value] = []
        for (name, value) in zip(constraint, values) {
            guard let stored = try storedConstraintValue(value, for: object.entity.propertiesByName[name]) else {
                return nil
            }
            wanted.append(stored)
        }
        let found = try UniquenessLookup(store: store, coordinator: coordinator, storeEntity: layout.storeEntity)
            .firstRow(
                of: owner, columns: columns, values: wanted,
                excluding: object.objectID.isTemporaryID ? [] : [object.objectID.primaryKey]
            ) { key, entity in
                isSettled(ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key))
            }
        return found.map { ManagedObjectID(entity: $0.entity, storeIdentifier: store.identifier, primaryKey: $0.key) }
    }

    /// The value a stored row holds for a constrained property whose value is `value`: the
    /// attribute's stored value, or a reference to the related object; `nil` when no stored row
    /// can hold it (a related object not yet saved in this store, or a property the store does
    /// not keep in a column).
    private func storedConstraintValue(_ value: Any?, for property: PropertyDescription?) throws -> Value? {
        switch property {
        case let attribute as AttributeDescription:
            return try ValueConversion.storeValue(value, for: attribute)
        case let relationship as RelationshipDescription where !relationship.isToMany:
            guard let id = value as? ManagedObjectID, !id.isTemporaryID, id.storeIdentifier == store.identifier else {
                return nil
            }
            return .reference(id.primaryKey)
        default:
            return nil
        }
    }
}
