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

    /// Fills `object` with the values of `row`; to-many relationships stay faults.
    ///
    /// - Parameter sequence: the store's sequence read before the row, for ``ManagedObject/snapshotSequence``.
    /// - Parameter references: the IDs of referenced objects already made by the fetch loading
    ///   the object, to share.
    func load(_ object: ManagedObject, from row: Row, layout: EntityLayout, sequence: UInt64, references: ReferenceIDs? = nil) throws {
        object.values = try values(of: object.runtime, from: row, layout: layout, storeIdentifier: object.objectID.storeIdentifier, references: references)
        object.committed = object.values
        object.isLoaded = true
        object.snapshotSequence = sequence
    }

    /// The object values of a row, by slot of `runtime`.
    ///
    /// Reads the slots' precomputed ``EntityRuntime/loads``, so that loading a row counts no
    /// references to the model's descriptions but for the destinations of to-one references.
    func values(of runtime: EntityRuntime, from row: Row, layout: EntityLayout, storeIdentifier: String?, references: ReferenceIDs? = nil) throws -> [Any?] {
        let loads = runtime.loads
        let columns = layout.slotColumns
        var values: [Any?] = []
        values.reserveCapacity(loads.count)
        try row.values.withUnsafeBufferPointer { stored in
            for slot in loads.indices {
                let column = columns[slot]
                guard column >= 0 else {
                    values.append(nil)
                    continue
                }
                switch loads[slot] {
                case .plain:
                    values.append(ValueConversion.plainValue(stored[column]))
                case .integer16:
                    if case .int(let value) = stored[column] { values.append(Int16(truncatingIfNeeded: value)) } else { values.append(ValueConversion.plainValue(stored[column])) }
                case .integer32:
                    if case .int(let value) = stored[column] { values.append(Int32(truncatingIfNeeded: value)) } else { values.append(ValueConversion.plainValue(stored[column])) }
                case .converted:
                    guard case .attribute(let attribute) = runtime.kinds[slot] else {
                        values.append(nil)
                        continue
                    }
                    values.append(try ValueConversion.objectValue(stored[column], for: attribute, coordinator: persistentStoreCoordinator))
                case .toOne, .toOneOfHierarchy:
                    guard case .reference(let key) = stored[column], let destination = runtime.toOneDestinations[slot], let storeIdentifier else {
                        values.append(nil)
                        continue
                    }
                    if loads[slot] == .toOne, let references {
                        values.append(references.id(destination: destination, storeIdentifier: storeIdentifier, key: key))
                    } else {
                        let id = ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
                        values.append(loads[slot] == .toOne ? id : resolvedID(id))
                    }
                case .none:
                    values.append(nil)
                }
            }
        }
        return values
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

/// The IDs of the objects the to-one references of one fetch's rows name, made once and shared
/// by the objects naming the same object (a thousand employees of one department hold one ID).
///
/// A direct-mapped table by primary key, with no hashing and no growth: a reference whose entry
/// holds another ID gets a new ID, which takes the entry.
final class ReferenceIDs {
    /// The IDs made so far, at their key's position (`key & mask`); empty until the first use.
    private var ids: [ManagedObjectID?] = []
    /// The positions of ``ids`` minus one.
    private static let mask = 255

    /// The ID of the object of `destination` with `key` in the store `storeIdentifier`.
    func id(destination: EntityDescription, storeIdentifier: String, key: PrimaryKey) -> ManagedObjectID {
        if ids.isEmpty { ids = Array(repeating: nil, count: Self.mask + 1) }
        let position = Int(truncatingIfNeeded: key) & Self.mask
        if let known = ids[position], known.primaryKey == key, known.entity === destination, known.storeIdentifier == storeIdentifier {
            return known
        }
        let id = ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
        ids[position] = id
        return id
    }
}
