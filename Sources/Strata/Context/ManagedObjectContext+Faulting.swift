import Foundation
import OrderedCollections
import StrataStore

extension ManagedObjectContext {
    /// Loads a fault's values from its row (one store read, none when the engine caches the block).
    func fulfillFault(_ object: ManagedObject) throws {
        // A temporary ID names no row (an object of another context, or one inserted and
        // deleted, then refreshed): marking it loaded with no values would trap on first read.
        guard let coordinator = persistentStoreCoordinator, !object.objectID.isTemporaryID else {
            throw CoreDataError(.coreData, "could not fulfill a fault for \(object.objectID): it names no stored object", objectID: object.objectID)
        }
        let (row, sequence) = try coordinator.snapshot(for: object.objectID)
        guard let row else {
            guard shouldDeleteInaccessibleFaults else {
                throw CoreDataError(.coreData, "could not fulfill a fault for \(object.objectID): the object was deleted", objectID: object.objectID)
            }
            object.values = object.runtime.properties.map { ($0 as? RelationshipDescription)?.isToMany == true ? OrderedSet<ManagedObjectID>() : nil }
            object.committed = object.values
            object.isLoaded = true
            object.isDeleted = true
            object.isInaccessible = true
            deletedSet.append(object)
            strongObjects.insert(object)
            return
        }
        try load(object, from: row, layout: try coordinator.layout(object.entity), sequence: sequence)
        object.awakeFromFetch()
    }

    /// Fills `object` with the values of `row`; to-many relationships stay faults.
    ///
    /// - Parameter sequence: the store's sequence read before the row, for ``ManagedObject/snapshotSequence``.
    func load(_ object: ManagedObject, from row: Row, layout: EntityLayout, sequence: UInt64) throws {
        object.values = try values(of: object.runtime, from: row, layout: layout, storeIdentifier: object.objectID.storeIdentifier)
        object.committed = object.values
        object.isLoaded = true
        object.snapshotSequence = sequence
    }

    /// The object values of a row, by slot of `runtime`.
    func values(of runtime: EntityRuntime, from row: Row, layout: EntityLayout, storeIdentifier: String?) throws -> [Any?] {
        let coordinator = persistentStoreCoordinator
        var values: [Any?] = []
        values.reserveCapacity(runtime.kinds.count)
        for (kind, column) in zip(runtime.kinds, layout.slotColumns) {
            guard column >= 0 else {
                values.append(nil)
                continue
            }
            switch kind {
            case .attribute(let attribute):
                values.append(try ValueConversion.objectValue(row[column], for: attribute, coordinator: coordinator))
            case .toOne(let relationship):
                guard case .reference(let key) = row[column], let destination = relationship.destinationEntity, let storeIdentifier
                else {
                    values.append(nil)
                    continue
                }
                values.append(resolvedID(ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)))
            case .toMany, .other:
                values.append(nil)
            }
        }
        return values
    }

    /// The IDs a to-many relationship of a saved object holds in the store: from the fetch
    /// index of the inverse to-one column, or from its join entity.
    func relatedIDs(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> OrderedSet<ManagedObjectID> {
        try relatedIDs(of: object.objectID, entity: object.entity, relationship)
    }

    /// The IDs a to-many relationship of the saved object `id` (of `entity`) holds in the store.
    func relatedIDs(of id: ManagedObjectID, entity: EntityDescription, _ relationship: RelationshipDescription) throws -> OrderedSet<ManagedObjectID> {
        guard !id.isTemporaryID, let coordinator = persistentStoreCoordinator, let identifier = id.storeIdentifier,
            let store = coordinator.store(identifier: identifier), let destination = relationship.destinationEntity
        else { return [] }
        let layout = try coordinator.layout(entity)
        let owner = Value.reference(id.primaryKey)
        let ids = try coordinator.storeCall { () -> OrderedSet<ManagedObjectID> in
            if let join = layout.joins[relationship.name] {
                var pairs: [(position: Int64, key: Int64)] = []
                for key in try store.rows.keys(join.storeEntity, column: join.ownerColumn, matching: .equal(owner), descending: false, limit: nil) {
                    guard let row = try store.rows.read(join.storeEntity, key: key), case .reference(let other) = row[join.otherColumn],
                        case .int(let position) = row[2]
                    else { continue }
                    pairs.append((position, other))
                }
                if join.isOrdered { pairs.sort { $0.position < $1.position } }
                return OrderedSet(pairs.map { ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0.key) })
            }
            guard let inverse = relationship.inverseRelationship, !inverse.isToMany else { return [] }
            let destinationLayout = try coordinator.layout(destination)
            guard let column = destinationLayout.columns[inverse.name] else { return [] }
            let keys = try store.rows.keys(destinationLayout.storeEntity, column: column, matching: .equal(owner), descending: false, limit: nil)
            return OrderedSet(keys.map { ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0) })
        }
        return destination.subentities.isEmpty ? ids : OrderedSet(ids.map(resolvedID))
    }
}
