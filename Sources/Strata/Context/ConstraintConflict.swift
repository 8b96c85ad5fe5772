import Foundation

/// A uniqueness-constraint conflict: objects of a save that share the values of a constraint,
/// with each other or with a stored object (Core Data's `NSConstraintConflict`).
open class ConstraintConflict: NSObject {
    /// The names of the constrained properties.
    public let constraint: [String]
    /// The shared values by property name.
    public let constraintValues: [String: Any]
    /// The stored object with the same values, registered in the saving context; `nil` when
    /// the conflict is among objects of the save only.
    public let databaseObject: ManagedObject?
    /// The stored object's values by property name.
    public let databaseSnapshot: [String: Any]?
    /// The objects of the save that share the values (inserted or changed).
    public let conflictingObjects: [ManagedObject]
    /// The values each conflicting object was read with (empty for inserted objects).
    public let conflictingSnapshots: [[AnyHashable: Any]]

    /// Creates a conflict (Core Data's
    /// `init(constraint:databaseObject:databaseSnapshot:conflictingObjects:conflictingSnapshots:)`).
    public init(
        constraint contraint: [String], databaseObject: ManagedObject?, databaseSnapshot: [AnyHashable: Any]?,
        conflictingObjects: [ManagedObject], conflictingSnapshots: [Any]
    ) {
        constraint = contraint
        var values: [String: Any] = [:]
        if let object = conflictingObjects.first, object.isLoaded {
            for name in contraint {
                if let slot = object.runtime.slots[name] { values[name] = object.values[slot] ?? NSNull() }
            }
        }
        constraintValues = values
        self.databaseObject = databaseObject
        self.databaseSnapshot = databaseSnapshot.map {
            Dictionary(uniqueKeysWithValues: $0.compactMap { key, value in (key.base as? String).map { ($0, value) } })
        }
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots.map { $0 as? [AnyHashable: Any] ?? [:] }
    }

    /// The error the `.error` policy reports for `conflicts`: one detailed error per object that
    /// takes values another already has.
    static func error(for conflicts: [ConstraintConflict]) -> CoreDataError {
        var errors: [CoreDataError] = []
        for conflict in conflicts {
            let names = conflict.constraint.joined(separator: ", ")
            let others = conflict.databaseObject.map { [$0] } ?? Array(conflict.conflictingObjects.prefix(1))
            for object in conflict.conflictingObjects where !others.contains(where: { $0 === object }) {
                errors.append(
                    CoreDataError(
                        .managedObjectConstraintMerge,
                        "\(object.entity.entityName) \(object.objectID) has the same \(names) as \(others[0].objectID)",
                        objectID: object.objectID, key: conflict.constraint.first))
            }
        }
        return CoreDataError(
            .managedObjectConstraintMerge, "\(errors.count) uniqueness constraint conflict(s)", detailedErrors: errors)
    }

    /// Resolves the conflict under `policy` (not `.error`): keeps the stored object (else the
    /// first changed, else the first inserted object), merges the values of the others into it
    /// and deletes them, moving their relationships to it.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectConstraintMerge` when an object to delete is a
    ///   stored one another object's constrained values now equal: Strata merges only inserted
    ///   objects away.
    func merge(_ policy: MergePolicyType) throws {
        let kept = databaseObject ?? conflictingObjects.first { !$0.isInserted } ?? conflictingObjects[0]
        guard let context = kept.managedObjectContext else { return }
        let merged = conflictingObjects.filter { $0 !== kept }
        if let stored = merged.first(where: { !$0.isInserted }) {
            throw CoreDataError(
                .managedObjectConstraintMerge,
                "\(stored.entity.entityName) \(stored.objectID) was changed to the same \(constraint.joined(separator: ", ")) as \(kept.objectID); only inserted objects are merged into another",
                objectID: stored.objectID, key: constraint.first)
        }
        for object in merged { try context.merge(object, into: kept, policy: policy) }
    }

    /// The constraint and the objects in conflict.
    open override var description: String {
        "<ConstraintConflict: \(constraint) \(constraintValues), database object \(databaseObject?.objectID.description ?? "none"), conflicting \(conflictingObjects.map(\.objectID))>"
    }
}
