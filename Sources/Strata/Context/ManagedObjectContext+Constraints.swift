import StrataStore

extension ManagedObjectContext {
    /// Checks the uniqueness constraints of every inserted and updated object against the store
    /// and against the other objects of the save.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectConstraintMerge` (133021)
    ///   listing each object whose constrained values another object already has. Strata
    ///   reports the conflict under every merge policy; it does not merge constrained objects.
    func checkUniquenessConstraints(coordinator: PersistentStoreCoordinator) throws {
        var errors: [CoreDataError] = []
        var claimed: [String: ManagedObject] = [:]
        for object in Array(insertedSet) + Array(updatedSet) {
            for (owner, constraint) in Self.uniquenessConstraints(of: object.entity) {
                let slots = constraint.compactMap { object.runtime.slots[$0] }
                guard slots.count == constraint.count else { continue }
                let values = slots.map { object.values[$0] }
                guard !values.contains(where: { $0 == nil }) else { continue }
                let claim = "\(owner.name)|\(constraint)|\(values.map { "\($0!)" })"
                if let other = claimed[claim], other !== object {
                    errors.append(conflict(object, constraint, with: other.objectID))
                    continue
                }
                claimed[claim] = object
                if let existing = try storedObject(matching: constraint, of: owner, values: values, of: object, coordinator: coordinator) {
                    errors.append(conflict(object, constraint, with: existing))
                }
            }
        }
        guard errors.isEmpty else {
            throw CoreDataError(.managedObjectConstraintMerge, "\(errors.count) uniqueness constraint conflict(s)", detailedErrors: errors)
        }
    }

    private func conflict(_ object: ManagedObject, _ constraint: [String], with other: ManagedObjectID) -> CoreDataError {
        CoreDataError(
            .managedObjectConstraintMerge,
            "\(object.entity.name) \(object.objectID) has the same \(constraint.joined(separator: ", ")) as \(other)",
            objectID: object.objectID, key: constraint.first)
    }

    /// The ID of a stored object of `owner` (the entity declaring the constraint) or a
    /// sub-entity, other than `object`, whose constrained columns hold `values`.
    private func storedObject(
        matching constraint: [String], of owner: EntityDescription, values: [Any?], of object: ManagedObject,
        coordinator: PersistentStoreCoordinator
    ) throws -> ManagedObjectID? {
        let layout = try coordinator.layout(object.entity)
        let columns = constraint.compactMap { layout.columns[$0] }
        guard columns.count == constraint.count, let store = try? coordinator.store(for: object.entity) else { return nil }
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
            // A stored object this save deletes, or changes away from these values, is no conflict.
            if let registered = registered[id]?.object, registered.isDeleted || registered.hasChanges { continue }
            let matches = try zip(attributes, zip(columns, values)).allSatisfy { attribute, pair in
                guard let attribute else { return false }
                return try ValueConversion.storeValue(pair.1, for: attribute) == row[pair.0]
            }
            if matches { return id }
        }
        return nil
    }

    /// The uniqueness constraints of `entity` and its superentities, as lists of property names,
    /// each with the entity declaring it (whose objects and sub-entities' objects it keeps apart).
    private static func uniquenessConstraints(of entity: EntityDescription) -> [(owner: EntityDescription, names: [String])] {
        var constraints: [(owner: EntityDescription, names: [String])] = []
        var current: EntityDescription? = entity
        while let candidate = current {
            constraints += candidate.uniquenessConstraints.map { $0.compactMap { $0 as? String } }.filter { !$0.isEmpty }.map { (candidate, $0) }
            current = candidate.superentity
        }
        return constraints
    }
}
