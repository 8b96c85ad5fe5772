import Foundation
import StrataStore

extension ManagedObjectContext {
    /// The objects (or IDs, or count) a fetch request matches, from the stores and this
    /// context's unsaved changes (Core Data's `fetch(_:)`).
    ///
    /// Unsaved inserted objects that match are included, objects changed in the context are
    /// matched on their in-memory state, deleted ones are left out, and objects already
    /// realized in the context are returned as they are, never overwritten.
    ///
    /// - Throws: ``CoreDataError`` when the request names no entity of the model or a store read fails.
    public func fetch<T>(_ request: FetchRequest<T>) throws -> [T] {
        switch request.resultType {
        case .managedObjectIDResultType:
            return try matchingObjects(request).map(\.objectID) as! [T]
        case .countResultType:
            // Counting needs no objects for the stored rows that match.
            return [try count(for: request)] as! [T]
        case .dictionaryResultType:
            return try matchingObjects(request).map { object in
                var values: [String: Any] = [:]
                for property in object.runtime.properties where !(property is RelationshipDescription && (property as! RelationshipDescription).isToMany) {
                    if let value = try object.value(forKey: property.name) {
                        values[property.name] = (value as? ManagedObject)?.objectID ?? value
                    }
                }
                return values
            } as! [T]
        case .managedObjectResultType:
            guard let typed = try matchingObjects(request) as? [T] else {
                throw CoreDataError(.coreData, "the fetched objects are not \(T.self); register the subclass with \(T.self).register(for:)")
            }
            return typed
        }
    }

    /// The number of objects `request` would fetch (Core Data's `count(for:)`), without
    /// creating objects for the stored rows that match.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        let (objects, others) = try collectMatches(request, materialize: false)
        let afterOffset = max(0, objects.count + others - request.fetchOffset)
        return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
    }

    /// The matching objects, sorted and cut to the request's offset and limit.
    private func matchingObjects<T>(_ request: FetchRequest<T>) throws -> [ManagedObject] {
        var matches = try collectMatches(request, materialize: true).objects
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            let keyed = matches.map { object in (object, descriptors.map { try? FetchPredicate.value(atKeyPath: $0.key, of: object) }) }
            matches = keyed.sorted { left, right in
                for (index, descriptor) in descriptors.enumerated() {
                    switch descriptor.compare(left.1[index], right.1[index]) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }.map(\.0)
        }
        let start = min(request.fetchOffset, matches.count)
        let end = request.fetchLimit > 0 ? min(matches.count, start + request.fetchLimit) : matches.count
        return Array(matches[start..<end])
    }

    /// The objects matching `request` among the stored rows and this context's changes, unsorted;
    /// without `materialize`, stored rows not registered in the context are only counted.
    private func collectMatches<T>(_ request: FetchRequest<T>, materialize: Bool) throws -> (objects: [ManagedObject], others: Int) {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        let entity = try request.resolveEntity(in: coordinator.managedObjectModel)
        let layout = try coordinator.layout(entity)
        let tags = Set(request.includesSubentities ? layout.tags : [layout.tag])
        let predicate = request.predicate
        let pending = request.includesPendingChanges
        var matches: [ManagedObject] = []
        var others = 0
        let mapping = try coordinator.mapping.get()
        // Per tag, what each matching row needs, looked up once per fetch.
        var concreteByTag: [Int64: (entity: EntityDescription, layout: EntityLayout, type: ManagedObject.Type)] = [:]
        for (tag, concrete) in mapping.entitiesByTag[layout.storeEntity] ?? [:] where tags.contains(tag) {
            concreteByTag[tag] = (concrete, mapping.layouts[concrete.name]!, ManagedObjectClassRegistry.type(for: concrete))
        }

        for store in coordinator.persistentStores {
            let sequence = store.rows.lastSequence
            try coordinator.storeCall {
                try store.rows.scan(layout.storeEntity) { key, row in
                    guard case .int(let tag) = row[0], let (concrete, concreteLayout, type) = concreteByTag[tag] else { return }
                    let id = ManagedObjectID(entity: concrete, storeIdentifier: store.identifier, primaryKey: key)
                    if let existing = registered[id]?.object {
                        if existing.isDeleted && pending { return }
                        if !existing.isLoaded {
                            try load(existing, from: row, layout: concreteLayout, sequence: sequence)
                            existing.awakeFromFetch()
                        }
                        let matched = pending || !existing.hasChanges
                            ? predicate?.evaluate(with: existing) ?? true
                            : try rowMatches(predicate, row: row, entity: concrete, store: store)
                        if matched { matches.append(existing) }
                        return
                    }
                    guard try rowMatches(predicate, row: row, entity: concrete, store: store) else { return }
                    guard materialize else {
                        others += 1
                        return
                    }
                    let object = type.init(faultFor: id, in: self)
                    try load(object, from: row, layout: concreteLayout, sequence: sequence)
                    register(object)
                    object.awakeFromFetch()
                    matches.append(object)
                }
            }
        }
        // Inserted objects are in no store yet, even those given permanent IDs.
        if pending {
            // Tags number the entities of one inheritance family only: match the entity itself.
            for object in insertedSet where request.includesSubentities ? object.entity.isKindOf(entity: entity) : object.entity === entity {
                if predicate?.evaluate(with: object) ?? true { matches.append(object) }
            }
        }
        return (matches, others)
    }

    /// Whether a stored row meets `predicate`, reading attribute and to-one columns directly and
    /// realizing objects only for key paths through relationships.
    private func rowMatches(_ predicate: FetchPredicate?, row: Row, entity: EntityDescription, store: PersistentStore) throws -> Bool {
        guard let predicate else { return true }
        let layout = try persistentStoreCoordinator!.layout(entity)
        let properties = entity.propertiesByName
        return predicate.evaluate { path -> Any? in
            let components = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard let property = properties[components[0]], let column = layout.columns[components[0]] else { return nil }
            var value: Any?
            if let attribute = property as? AttributeDescription {
                value = try? ValueConversion.objectValue(row[column], for: attribute, coordinator: persistentStoreCoordinator)
            } else if let relationship = property as? RelationshipDescription, case .reference(let key) = row[column],
                let destination = relationship.destinationEntity
            {
                value = ManagedObjectID(entity: destination, storeIdentifier: store.identifier, primaryKey: key)
            }
            guard components.count == 2 else { return value }
            guard let id = value as? ManagedObjectID else { return nil }
            return try? FetchPredicate.value(atKeyPath: components[1], of: object(with: id))
        }
    }
}
