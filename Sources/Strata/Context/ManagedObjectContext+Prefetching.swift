import Foundation

extension ManagedObjectContext {
    /// The objects of `ids`, in order, realized: registered objects as they are (faults
    /// fulfilled), others created and registered; the rows of one store entity read together
    /// by the store layer (``StoreReader/snapshots(storeEntity:keys:)``), one read per block.
    /// An ID without a row gives a fault, which reports it when it fires.
    ///
    /// - Throws: ``CoreDataError`` when a store read fails.
    func realizeObjects(_ ids: [ManagedObjectID]) throws -> [ManagedObject] {
        if let parent = nesting.parent { return try realizeObjects(ids, from: parent) }
        guard let coordinator = persistentStoreCoordinator else { return ids.map { object(with: $0) } }
        var results = [ManagedObject?](repeating: nil, count: ids.count)
        // Positions to read, by store identifier and store entity.
        var groups: [String: [Int: [Int]]] = [:]
        for (position, id) in ids.enumerated() {
            if let existing = registered[id], existing.isLoaded {
                results[position] = existing
            } else if !id.isTemporaryID, let identifier = id.storeIdentifier {
                groups[identifier, default: [:]][try coordinator.layout(id.entity).storeEntity, default: []]
                    .append(position)
            } else {
                results[position] = object(with: id)
            }
        }
        for (identifier, byEntity) in groups {
            guard let store = readingStore(identifier: identifier) else {
                for positions in byEntity.values {
                    for position in positions { results[position] = object(with: ids[position]) }
                }
                continue
            }
            let reader = reader(store, coordinator: coordinator)
            for (storeEntity, positions) in byEntity {
                let (snapshots, sequence) = try reader.snapshots(
                    storeEntity: storeEntity, keys: positions.map { ids[$0].primaryKey })
                for (position, snapshot) in zip(positions, snapshots) {
                    let id = ids[position]
                    guard let snapshot else {
                        results[position] = object(with: id)
                        continue
                    }
                    let entity = snapshot.entity
                    let concreteID =
                        entity === id.entity
                        ? id : ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: id.primaryKey)
                    let object: ManagedObject
                    if let existing = registered[concreteID] {
                        object = existing
                    } else {
                        object = objectClass(of: entity).init(faultFor: concreteID, in: self)
                        register(object)
                    }
                    if !object.isLoaded {
                        try load(object, from: snapshot.row, layout: snapshot.layout, sequence: sequence)
                        object.awakeFromFetch()
                    }
                    results[position] = object
                }
            }
        }
        return results.map { $0! }
    }

    /// Realizes the objects at the relationship key paths `paths` of `objects` (Core Data's
    /// `relationshipKeyPathsForPrefetching`): for each first key, the related objects of all
    /// `objects` together, then the rest of the paths from those. The context holds the
    /// prefetched objects until its next save, rollback or reset.
    ///
    /// - Throws: ``CoreDataError`` when a key is not a relationship or a read fails.
    func prefetch(_ paths: [String], for objects: [ManagedObject]) throws {
        var byFirst: [String: [String]] = [:]
        var order: [String] = []
        for path in paths {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard let first = parts.first else { continue }
            if byFirst[first] == nil { order.append(first) }
            byFirst[first, default: []] += parts.count > 1 ? [parts[1]] : []
        }
        for key in order {
            var seen = Set<ManagedObjectID>()
            var related: [ManagedObjectID] = []
            for object in objects where object.entity.relationshipsByName[key] != nil {
                for id in try object.relatedIDs(key) where seen.insert(id).inserted { related.append(id) }
            }
            let realized = try realizeObjects(related)
            // Nothing else holds the related objects (relationships hold IDs): keep them until
            // the next save, rollback or reset, so that reading the relationship finds them.
            strongObjects.formUnion(realized)
            if let rest = byFirst[key], !rest.isEmpty { try prefetch(rest, for: realized) }
        }
    }
}
