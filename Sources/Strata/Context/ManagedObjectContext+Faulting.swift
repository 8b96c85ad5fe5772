import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Loads a fault's values from its row (one store read, none when the engine caches the block).
    func fulfillFault(_ object: ManagedObject) throws {
        if let parent = nesting.parent { return try fulfillFault(object, from: parent) }
        // A temporary ID names no row (an object of another context, or one inserted and
        // deleted, then refreshed): marking it loaded with no values would trap on first read.
        guard let coordinator = persistentStoreCoordinator, !object.objectID.isTemporaryID else {
            throw CoreDataError(
                .coreData, "could not fulfill a fault for \(object.objectID): it names no stored object",
                objectID: object.objectID)
        }
        let layout = try faultLayout(object.entity, coordinator: coordinator)
        let (row, sequence) = try storedSnapshot(for: object.objectID, layout: layout)
        guard let row else {
            return try markInaccessible(object)
        }
        try load(object, from: row, layout: layout, sequence: sequence)
        object.awakeFromFetch()
    }

    /// Makes a fault whose object is gone a deleted object with nil values, discarded by the next
    /// save (``shouldDeleteInaccessibleFaults``), or reports it.
    func markInaccessible(_ object: ManagedObject) throws {
        guard shouldDeleteInaccessibleFaults else {
            throw CoreDataError(
                .coreData, "could not fulfill a fault for \(object.objectID): the object was deleted",
                objectID: object.objectID)
        }
        markGone(object)
    }

    /// Makes `object`, whose row is gone, a deleted object that stays registered and in
    /// ``deletedObjects`` until the next save or rollback, which has nothing to write for it. A
    /// fault gets `nil` values; a loaded object keeps the values it had.
    func markGone(_ object: ManagedObject) {
        insertedSet.remove(object)
        updatedSet.remove(object)
        if !object.isLoaded {
            object.values = object.runtime.properties.map {
                ($0 as? RelationshipDescription)?.isToMany == true ? OrderedSet<ManagedObjectID>() : nil
            }
            object.committed = object.values
            object.isLoaded = true
        }
        object.isInserted = false
        object.isDeleted = true
        object.isInaccessible = true
        if !deletedSet.contains(object) { deletedSet.append(object) }
        strongObjects.insert(object)
    }

    /// Loads `object` from `row`: its values decode lazily, each slot on first access
    /// (``ManagedObject/loadLazily(from:layout:context:references:)``); to-many relationships
    /// stay faults.
    ///
    /// - Parameter sequence: the store's sequence read before the row, for ``ManagedObject/snapshotSequence``.
    /// - Parameter references: the IDs of referenced objects already made by the fetch loading
    ///   the object, to share.
    func load(
        _ object: ManagedObject, from row: consuming StoredRow, layout: EntityLayout, sequence: UInt64,
        references: ReferenceIDs? = nil
    ) throws {
        try object.loadLazily(from: row, layout: layout, context: self, references: references)
        object.isLoaded = true
        object.snapshotSequence = sequence
    }

    /// The IDs a to-many relationship of a saved object holds in the store: from the fetch
    /// index of the inverse to-one column, or from its join entity.
    func relatedIDs(
        of object: ManagedObject, _ relationship: RelationshipDescription
    ) throws -> OrderedSet<ManagedObjectID> {
        if let parent = nesting.parent { return try relatedIDs(of: object, relationship, from: parent) }
        return try relatedIDs(of: object.objectID, entity: object.entity, relationship)
    }

    /// The IDs a to-many relationship of the saved object `id` (of `entity`) holds in the store,
    /// read by the store layer (``StoreReader/relatedIDs(of:entity:_:)``), with the concrete
    /// entity of objects this context knows.
    func relatedIDs(
        of id: ManagedObjectID, entity: EntityDescription, _ relationship: RelationshipDescription
    ) throws -> OrderedSet<ManagedObjectID> {
        guard !id.isTemporaryID, let coordinator = persistentStoreCoordinator, let identifier = id.storeIdentifier,
            let store = readingStore(identifier: identifier), let destination = relationship.destinationEntity
        else { return [] }
        let (ids, concrete) = try reader(store, coordinator: coordinator).relatedIDs(
            of: id, entity: entity, relationship)
        return concrete || destination.subentities.isEmpty ? ids : OrderedSet(ids.map(resolvedID))
    }
}
