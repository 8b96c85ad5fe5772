import OrderedCollections

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
        var claims: OrderedDictionary<ConstraintKey, (owner: EntityDescription, objects: [ManagedObject])> = [:]
        for objects in [insertedSet, updatedSet] {
            for object in objects where !object.isDeleted {
                for (owner, constraint) in object.runtime.uniquenessConstraints {
                    guard let key = try ConstraintKey(of: object, constraint, owner: owner) else { continue }
                    claims[key, default: (owner, [])].objects.append(object)
                }
            }
        }
        var conflicts: [ConstraintConflict] = []
        for (key, claim) in claims {
            let objects = claim.objects
            let first = objects[0]
            let values = key.constraint.map { first.values[first.runtime.slots[$0]!] }
            let stored = try storedObject(
                matching: key.constraint, of: claim.owner, values: values, of: first, coordinator: coordinator)
            guard objects.count > 1 || stored != nil else { continue }
            let database = try stored.map { try existingObject(with: $0) }
            conflicts.append(
                ConstraintConflict(
                    constraint: key.constraint, databaseObject: database,
                    databaseSnapshot: database.map {
                        MergeConflict.snapshot($0.committed ?? $0.values, of: $0.runtime)
                    },
                    conflictingObjects: objects,
                    conflictingSnapshots: objects.map { object in
                        object.committed.map { MergeConflict.snapshot($0, of: object.runtime) } ?? [:]
                    }))
        }
        return conflicts
    }

    /// The ID of a stored object of `owner` (the entity declaring the constraint) or a
    /// sub-entity, other than `object`, whose constrained columns hold `values`, read by the
    /// store layer. A stored object this save deletes, or changes away from these values, is
    /// no conflict.
    private func storedObject(
        matching constraint: [String], of owner: EntityDescription, values: [Any?], of object: ManagedObject,
        coordinator: PersistentStoreCoordinator
    ) throws -> ManagedObjectID? {
        guard let store = try? coordinator.store(for: object.entity) else { return nil }
        return try StoreWriter(store: store, coordinator: coordinator).storedObject(
            matching: constraint, of: owner, values: values, of: object
        ) { id in
            guard let registered = registered[id] else { return false }
            return registered.isDeleted || registered.hasChanges
        }
    }

    /// The uniqueness constraints of `entity` and its superentities, as lists of property names,
    /// each with the entity declaring it (whose objects and sub-entities' objects it keeps apart).
    static func uniquenessConstraints(of entity: EntityDescription) -> [(owner: EntityDescription, names: [String])] {
        var constraints: [(owner: EntityDescription, names: [String])] = []
        var current: EntityDescription? = entity
        while let candidate = current {
            constraints += candidate.uniquenessConstraints.map { $0.compactMap { $0 as? String } }.filter {
                !$0.isEmpty
            }.map { (candidate, $0) }
            current = candidate.superentity
        }
        return constraints
    }
}
