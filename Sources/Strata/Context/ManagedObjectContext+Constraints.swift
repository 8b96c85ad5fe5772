import OrderedCollections
import StrataStore

extension ManagedObjectContext {
    /// Checks the uniqueness constraints of every inserted and updated object against the store
    /// and against the other objects of the save, and has the merge policy resolve the
    /// conflicts (Core Data's `resolve(constraintConflicts:)`).
    ///
    /// - Throws: what the merge policy throws (``CoreDataError`` `managedObjectConstraintMerge`
    ///   under ``MergePolicy/error``), or `managedObjectConstraintMerge` listing each object
    ///   whose constrained values another object still has after the policy ran.
    func resolveUniquenessConstraints(coordinator: PersistentStoreCoordinator) throws {
        let conflicts = try uniquenessConflicts(coordinator: coordinator)
        guard !conflicts.isEmpty else { return }
        try mergePolicy.resolve(constraintConflicts: conflicts)
        propagateDeletes()
        let remaining = try uniquenessConflicts(coordinator: coordinator)
        guard remaining.isEmpty else { throw ConstraintConflict.error(for: remaining) }
    }

    /// The groups of objects of the save (and the stored object) that share the values of a
    /// uniqueness constraint, compared as typed stored values.
    func uniquenessConflicts(coordinator: PersistentStoreCoordinator) throws -> [ConstraintConflict] {
        var claims: OrderedDictionary<ConstraintKey, [ManagedObject]> = [:]
        for object in Array(insertedSet) + Array(updatedSet) where !object.isDeleted {
            for constraint in Self.uniquenessConstraints(of: object.entity) {
                guard let key = try constraintKey(of: object, constraint) else { continue }
                claims[key, default: []].append(object)
            }
        }
        var conflicts: [ConstraintConflict] = []
        for (key, objects) in claims {
            let first = objects[0]
            let values = key.constraint.map { first.values[first.runtime.slots[$0]!] }
            let stored = try storedObject(matching: key.constraint, values: values, of: first, coordinator: coordinator)
            guard objects.count > 1 || stored != nil else { continue }
            let database = try stored.map { try existingObject(with: $0) }
            conflicts.append(ConstraintConflict(
                constraint: key.constraint, databaseObject: database,
                databaseSnapshot: database.map { MergeConflict.snapshot($0.committed ?? $0.values, of: $0.runtime) },
                conflictingObjects: objects,
                conflictingSnapshots: objects.map { object in object.committed.map { MergeConflict.snapshot($0, of: object.runtime) } ?? [:] }))
        }
        return conflicts
    }

    /// The typed key of `object`'s values for `constraint`, or `nil` when one of them is nil
    /// (a constraint does not apply to missing values).
    private func constraintKey(of object: ManagedObject, _ constraint: [String]) throws -> ConstraintKey? {
        var values: [ConstrainedValue] = []
        for name in constraint {
            guard let slot = object.runtime.slots[name], let value = object.values[slot] else { return nil }
            if let attribute = object.runtime.properties[slot] as? AttributeDescription {
                values.append(.stored(try ValueConversion.storeValue(value, for: attribute)))
            } else if let id = value as? ManagedObjectID {
                values.append(.object(id))
            } else {
                return nil
            }
        }
        return ConstraintKey(root: ObjectIdentifier(Self.root(of: object.entity)), constraint: constraint, values: values)
    }

    /// The ID of a stored object, other than `object`, whose constrained columns hold `values`.
    private func storedObject(
        matching constraint: [String], values: [Any?], of object: ManagedObject, coordinator: PersistentStoreCoordinator
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
                let concrete = try coordinator.concreteEntity(of: row, storeEntity: layout.storeEntity)
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

    /// The uniqueness constraints of `entity` and its superentities, as lists of property names.
    private static func uniquenessConstraints(of entity: EntityDescription) -> [[String]] {
        var constraints: [[String]] = []
        var current: EntityDescription? = entity
        while let candidate = current {
            constraints += candidate.uniquenessConstraints.map { $0.compactMap { $0 as? String } }.filter { !$0.isEmpty }
            current = candidate.superentity
        }
        return constraints
    }

    private static func root(of entity: EntityDescription) -> EntityDescription {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root
    }
}

/// A constrained property's value as the store compares it: a stored value (exact: dates to the
/// fraction of a second, data by content) or a related object's ID.
private enum ConstrainedValue: Hashable {
    case stored(Value)
    case object(ManagedObjectID)
}

/// One constraint of one entity hierarchy with the values an object has for it.
private struct ConstraintKey: Hashable {
    var root: ObjectIdentifier
    var constraint: [String]
    var values: [ConstrainedValue]
}
