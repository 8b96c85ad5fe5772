import Foundation
internal import StrataStore

extension ManagedObjectContext {
    /// Whether a stored row meets `predicate`, reading the row's attribute and to-one columns
    /// directly. Keys of related objects are read from the context, unsaved changes included,
    /// or, with `storedState` (a fetch that ignores pending changes), from their stored rows,
    /// as a store evaluates them. Block predicates get the realized object.
    func rowMatches(
        _ predicate: FetchPredicate, row: Row, key: PrimaryKey, entity: EntityDescription, layout: EntityLayout,
        store: PersistentStore,
        storedState: Bool
    ) throws -> Bool {
        let id = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
        if predicate.containsBlock { return predicate.evaluate(with: object(with: id)) }
        return predicate.evaluate(
            with: id, valueForKey: storedKeyReader(id, row: row, layout: layout, storedState: storedState))
    }

    /// Reads one key of one object for predicates and key paths evaluated on the stored row of
    /// `root`: the row's columns for `root`; for other IDs, the object in the context (unsaved
    /// changes included) or, with `storedState`, its stored row; managed objects and
    /// dictionaries as ``FetchPredicate/evaluate(with:)`` reads them.
    private func storedKeyReader(
        _ root: ManagedObjectID, row: Row, layout: EntityLayout, storedState: Bool
    ) -> (Any, String) throws -> Any? {
        var rows: [ManagedObjectID: (row: Row, layout: EntityLayout)?] = [root: (row, layout)]
        return { [unowned self] object, key in
            guard let id = object as? ManagedObjectID else { return try FetchPredicate.value(of: object, forKey: key) }
            if rows[id] == nil {
                guard storedState, let coordinator = persistentStoreCoordinator else {
                    return try self.object(with: id).value(forCheckedKey: key)
                }
                let layout = try coordinator.layout(id.entity)
                rows[id] = try storedSnapshot(for: id, layout: layout).row.map { ($0.row, layout) }
            }
            guard let stored = rows[id]! else { throw CoreDataError(.coreData, "no stored row for \(id)") }
            return try storedValue(key, of: id, row: stored.row, layout: stored.layout, storedState: storedState)
        }
    }

    /// The value of `key` of the stored object `id` whose row is `row`: attributes and to-one
    /// relationships (as IDs) from the columns; to-many relationships from the store's indexes
    /// with `storedState`, else, like transient properties, from the object in the context.
    private func storedValue(
        _ key: String, of id: ManagedObjectID, row: Row, layout: EntityLayout, storedState: Bool
    ) throws -> Any? {
        guard let property = id.entity.propertiesByName[key] else {
            throw CoreDataError(.keyValueValidation, "no property \(key) in \(id.entity.entityName)")
        }
        if let column = layout.columns[key], !property.isTransient {
            return try RowDecoding.value(
                row[column], for: property, storeIdentifier: id.storeIdentifier, coordinator: persistentStoreCoordinator
            )
        }
        if storedState, let relationship = property as? RelationshipDescription, relationship.isToMany {
            return Array(try relatedIDs(of: id, entity: id.entity, relationship))
        }
        return try object(with: id).value(forCheckedKey: key)
    }

    /// The value at a dotted key path of the object a stored row holds: attributes and to-one
    /// relationships (as IDs) from the row's columns; anything further (through a relationship,
    /// a to-many relationship, a transient property) from the objects in the context. `nil` for
    /// a key the entity does not have.
    func rowValue(
        atKeyPath path: String, row: Row, key: PrimaryKey, entity: EntityDescription, layout: EntityLayout,
        store: PersistentStore
    ) -> Any? {
        let id = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
        let evaluation = PredicateEvaluation(
            valueForKey: storedKeyReader(id, row: row, layout: layout, storedState: false), substitutionVariables: nil)
        return (try? evaluation.value(.keyPath(path), object: id, bindings: [:])) ?? nil
    }

    /// The value at `path` of a candidate: from its row, or from the object.
    func candidateValue(
        atKeyPath path: String, _ candidate: FetchCandidate, plan: QueryPlan, stores: FetchStores
    ) -> Any? {
        switch candidate {
        case .object(let object):
            return try? FetchPredicate.value(atKeyPath: path, of: object)
        case .stored(let match):
            guard let row = match.row?.row, let tag = match.tag, let concrete = plan.concrete(tag: tag) else {
                return nil
            }
            return rowValue(
                atKeyPath: path, row: row, key: match.key, entity: concrete.entity, layout: concrete.layout,
                store: stores.stores[match.store])
        }
    }

    /// `candidates` in the order of `descriptors`, each candidate's keys read once.
    func sort(
        _ candidates: [FetchCandidate], by descriptors: [FetchSortDescriptor], plan: QueryPlan, stores: FetchStores
    ) throws -> [FetchCandidate] {
        let keyed = candidates.map { candidate in
            (candidate, descriptors.map { candidateValue(atKeyPath: $0.key, candidate, plan: plan, stores: stores) })
        }
        return keyed.sorted { left, right in
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
}
