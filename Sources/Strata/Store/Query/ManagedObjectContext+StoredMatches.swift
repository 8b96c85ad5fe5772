import Foundation
internal import StrataStore

extension ManagedObjectContext {
    /// Calls `emit` with every stored row `plan` matches, store by store through the store layer
    /// (``StoreReader/executeFetch(_:position:skip:rowsNeeded:encodedRows:evaluate:emit:)``), leaving
    /// out the rows of objects whose unsaved state is evaluated in memory.
    ///
    /// - Parameters:
    ///   - rowsNeeded: whether the caller reads the matches' rows (see
    ///     ``StoreReader/executeFetch(_:position:skip:rowsNeeded:encodedRows:evaluate:emit:)``).
    ///   - encodedRows: whether the caller reads the rows only to load objects from them.
    func collectStored(
        _ plan: QueryPlan, stores: FetchStores, rowsNeeded: Bool = true, encodedRows: Bool = false,
        emit: (consuming StoredMatch) throws -> Void
    ) throws {
        guard let coordinator = persistentStoreCoordinator else { return }
        let changed = plan.mergesPendingChanges ? changedKeys(plan) : [:]
        let storedState = !plan.mergesPendingChanges
        for (position, store) in stores.stores.enumerated() {
            try reader(store, coordinator: coordinator).executeFetch(
                plan, position: position, skip: changed[store.identifier] ?? [], rowsNeeded: rowsNeeded,
                encodedRows: encodedRows,
                evaluate: { part, row, key, concrete in
                    try rowMatches(
                        part, row: row, key: key, entity: concrete.entity, layout: concrete.layout, store: store,
                        storedState: storedState)
                },
                emit: emit)
        }
    }

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

    /// The value at a dotted key path of the object a stored match of `plan` holds: attributes
    /// and to-one relationships (as IDs) from the row's columns; anything further (through a
    /// relationship, a to-many relationship, a transient property) from the objects in the
    /// context. `nil` for a key the entity does not have, and for a match read without its row.
    func rowValue(atKeyPath path: String, of match: StoredMatch, plan: QueryPlan, stores: FetchStores) -> Any? {
        guard let row = match.row?.row, let tag = match.tag, let concrete = plan.concrete(tag: tag) else {
            return nil
        }
        let id = ManagedObjectID(
            entity: concrete.entity, storeIdentifier: stores.stores[match.store].identifier, primaryKey: match.key)
        let evaluation = PredicateEvaluation(
            valueForKey: storedKeyReader(id, row: row, layout: concrete.layout, storedState: false),
            substitutionVariables: nil)
        return (try? evaluation.value(.keyPath(path), object: id, bindings: [:])) ?? nil
    }
}
