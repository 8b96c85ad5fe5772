import Foundation
import OrderedCollections
import StrataStore

extension ManagedObjectContext {
    /// Loads a fault's values from its row (one store read, none when the engine caches the block).
    func fulfillFault(_ object: ManagedObject) throws {
        if nesting.parent != nil { return try fulfillFaultFromParent(object) }
        // A temporary ID names no row (an object of another context, or one inserted and
        // deleted, then refreshed): marking it loaded with no values would trap on first read.
        guard let coordinator = persistentStoreCoordinator, !object.objectID.isTemporaryID else {
            throw CoreDataError(.coreData, "could not fulfill a fault for \(object.objectID): it names no stored object", objectID: object.objectID)
        }
        let (row, sequence) = try storedSnapshot(for: object.objectID)
        guard let row else {
            return try markInaccessible(object)
        }
        try load(object, from: row, layout: try coordinator.layout(object.entity), sequence: sequence)
        object.awakeFromFetch()
    }

    /// Makes a fault whose object is gone a deleted object with nil values, discarded by the next
    /// save (``shouldDeleteInaccessibleFaults``), or reports it.
    func markInaccessible(_ object: ManagedObject) throws {
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
    }

    /// Loads `object` from `row`: its values decode lazily, each slot on first access
    /// (``ManagedObject/loadLazily(from:layout:context:references:)``); to-many relationships
    /// stay faults.
    ///
    /// - Parameter sequence: the store's sequence read before the row, for ``ManagedObject/snapshotSequence``.
    /// - Parameter references: the IDs of referenced objects already made by the fetch loading
    ///   the object, to share.
    func load(_ object: ManagedObject, from row: Row, layout: EntityLayout, sequence: UInt64, references: ReferenceIDs? = nil) throws {
        try object.loadLazily(from: row, layout: layout, context: self, references: references)
        object.isLoaded = true
        object.snapshotSequence = sequence
    }

    /// The IDs a to-many relationship of a saved object holds in the store: from the fetch
    /// index of the inverse to-one column, or from its join entity.
    func relatedIDs(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> OrderedSet<ManagedObjectID> {
        if nesting.parent != nil { return try relatedIDsFromParent(of: object, relationship) }
        return try relatedIDs(of: object.objectID, entity: object.entity, relationship)
    }

    /// The IDs a to-many relationship of the saved object `id` (of `entity`) holds in the store.
    func relatedIDs(of id: ManagedObjectID, entity: EntityDescription, _ relationship: RelationshipDescription) throws -> OrderedSet<ManagedObjectID> {
        guard !id.isTemporaryID, let coordinator = persistentStoreCoordinator, let identifier = id.storeIdentifier,
            let store = readingStore(identifier: identifier), let destination = relationship.destinationEntity
        else { return [] }
        let layout = try coordinator.layout(entity)
        let owner = Value.reference(id.primaryKey)
        // The IDs, and whether they already carry their concrete entity.
        let (ids, concrete) = try coordinator.storeCall { () -> (OrderedSet<ManagedObjectID>, Bool) in
            if let join = layout.joins[relationship.name] {
                var pairs: [(position: Int64, key: Int64)] = []
                for key in try store.rows.keys(join.storeEntity, column: join.ownerColumn, matching: .equal(owner), descending: false, limit: nil) {
                    guard let row = try store.rows.read(join.storeEntity, key: key), case .reference(let other) = row[join.otherColumn],
                        case .int(let position) = row[2]
                    else { continue }
                    pairs.append((position, other))
                }
                if join.isOrdered { pairs.sort { $0.position < $1.position } }
                return (OrderedSet(pairs.map { ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0.key) }), false)
            }
            guard let inverse = relationship.inverseRelationship, !inverse.isToMany else { return ([], true) }
            let destinationLayout = try coordinator.layout(destination)
            guard let column = destinationLayout.columns[inverse.name] else { return ([], true) }
            let keys = try store.rows.keys(destinationLayout.storeEntity, column: column, matching: .equal(owner), descending: false, limit: nil)
            guard destinationLayout.sharedColumns.contains(column) else {
                return (OrderedSet(keys.map { ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0) }), false)
            }
            return (try concreteIDs(keys, of: destinationLayout, store: store, coordinator: coordinator), true)
        }
        return concrete || destination.subentities.isEmpty ? ids : OrderedSet(ids.map(resolvedID))
    }

    /// The IDs, with their concrete entity, of the rows at `keys` (in that order) that belong to
    /// `layout`'s entity or its sub-entities; rows of other entities of the hierarchy are left out.
    private func concreteIDs(
        _ keys: [PrimaryKey], of layout: EntityLayout, store: PersistentStore, coordinator: PersistentStoreCoordinator
    ) throws -> OrderedSet<ManagedObjectID> {
        let family = try coordinator.mapping.get().entitiesByTag[layout.storeEntity] ?? [:]
        var entities: [PrimaryKey: EntityDescription] = [:]
        try store.rows.forEachRow(layout.storeEntity, keys: keys, columns: [0]) { key, row in
            if case .int(let tag) = row[0], layout.tags.contains(tag), let entity = family[tag] { entities[key] = entity }
        }
        return OrderedSet(keys.compactMap { key in
            entities[key].map { ManagedObjectID(entity: $0, storeIdentifier: store.identifier, primaryKey: key) }
        })
    }
}
