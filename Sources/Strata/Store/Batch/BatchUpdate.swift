internal import StrataStore

/// The store side of a ``BatchUpdateRequest``: the new values converted to stored values once,
/// then, for each store, one transaction updating the rows of the objects the request's fetch
/// matches, checked against the entity's uniqueness constraints.
struct BatchUpdate {
    let coordinator: PersistentStoreCoordinator
    /// The entity whose objects are updated.
    let entity: EntityDescription
    /// The columns set, with their new stored values.
    private let changes: [(column: Int, value: Value)]
    /// The columns set, in order.
    private let columns: [Int]

    /// Prepares setting `values` (by attribute name or ``AttributeDescription``) on objects of `entity`.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for an unknown attribute or a value of
    ///   another type, `validationMissingMandatoryProperty` for `nil` on a required attribute.
    init(coordinator: PersistentStoreCoordinator, entity: EntityDescription, values: [AnyHashable: Any]) throws {
        self.coordinator = coordinator
        self.entity = entity
        var changes: [(column: Int, value: Value)] = []
        for (key, value) in values {
            let attribute = try BatchValues.attribute(key, of: entity)
            guard let column = try coordinator.layout(entity).columns[attribute.name] else {
                throw CoreDataError(
                    .keyValueValidation, "\(entity.entityName).\(attribute.name) has no column in the store",
                    key: attribute.name)
            }
            changes.append((column, try BatchValues.storeValue(value, for: attribute, entity: entity)))
        }
        self.changes = changes
        columns = changes.map(\.column).sorted()
    }

    /// Updates the stored objects `fetch` matches and commits the updates, on the condition
    /// that no commit since `since` (each store's newest sequence before the request read it)
    /// changed the entity. Call it in the coordinator's `withSaveLock`.
    ///
    /// - Parameter listingIDs: whether the IDs of the updated objects are returned.
    /// - Returns: the IDs of the updated objects (empty unless `listingIDs`) and their number.
    /// - Throws: ``CoreDataError`` `managedObjectConstraintMerge` when two objects would share
    ///   a uniqueness constraint's values, `persistentStoreOperation` when a store fails,
    ///   ``SaveConflict`` when a commit since changed the entity; nothing is written then.
    func commit(
        matching fetch: FetchRequest<ManagedObjectID>, in context: ManagedObjectContext, since: [String: UInt64],
        listingIDs: Bool
    ) throws -> (ids: [ManagedObjectID], count: Int) {
        var updated: [ManagedObjectID] = []
        var count = 0
        var found = try fetch.storedMatches(in: context)
        guard !columns.isEmpty else { return ([], 0) }
        // The hierarchy's rows live in one engine entity.
        let storeEntity = try coordinator.layout(entity).storeEntity
        // Taken out of `found`, so that each row is referenced once and changes in place.
        var matches: [StoredMatch] = []
        swap(&matches, &found.matches)
        var byStore = [[Int]](repeating: [], count: found.stores.stores.count)
        for (position, match) in matches.enumerated() { byStore[match.store].append(position) }
        var transactions: [String: Transaction] = [:]
        for (storePosition, positions) in byStore.enumerated() where !positions.isEmpty {
            let identifier = found.stores.stores[storePosition].identifier
            guard let store = coordinator.store(identifier: identifier) else { continue }
            var constraints = try BatchConstraints(coordinator: coordinator, store: store, entity: entity)
            let checks = constraints.constrains(columns)
            let rewritten = checks ? Set(positions.map { matches[$0].key }) : []
            // Rows the fetch did not read are read block by block.
            let unread = positions.filter { matches[$0].row == nil }
            if !unread.isEmpty {
                let rows = try coordinator.storeCall {
                    try store.rows.read(storeEntity, keys: unread.map { matches[$0].key })
                }
                for (position, row) in zip(unread, rows) { matches[position].row = row.map(StoredRow.decoded) }
            }
            var transaction = Transaction(author: context.transactionAuthor, contextName: context.name)
            transaction.operations.reserveCapacity(positions.count)
            for position in positions {
                // The row is taken out of `matches`, so that changing it does not copy its values.
                guard let stored = matches[position].row.take() else { continue }
                var row = (consume stored).row
                let key = matches[position].key
                for change in changes { row.values[change.column] = change.value }
                if checks {
                    if let other = try constraints.conflict(for: row, key: key, rewritten: rewritten) {
                        let id = found.objectID(of: matches[position], in: context)
                        throw CoreDataError(
                            .managedObjectConstraintMerge,
                            "the update would give \(id) the constrained values of the object with key \(other)",
                            objectID: id)
                    }
                    constraints.record(row, key: key)
                }
                transaction.update(storeEntity, key: key, row: row, changedColumns: columns)
                if listingIDs { updated.append(found.objectID(of: matches[position], in: context)) }
                count += 1
            }
            transactions[identifier] = transaction
        }
        try BatchWriter(coordinator: coordinator).commit(transactions, since: since)
        return (updated, count)
    }
}
