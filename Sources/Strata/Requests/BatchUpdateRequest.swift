internal import StrataStore

/// What executing a ``BatchUpdateRequest`` returns in its ``BatchUpdateResult/result`` (Core
/// Data's `NSBatchUpdateRequestResultType`).
public enum BatchUpdateRequestResultType: UInt, Sendable, Hashable {
    /// `true` when the request succeeded.
    case statusOnlyResultType = 0
    /// The `[ManagedObjectID]` of the updated objects.
    case updatedObjectIDsResultType = 1
    /// The number (`Int`) of objects updated.
    case updatedObjectsCountResultType = 2
}

/// A request setting attributes of every stored object of an entity that meets a predicate,
/// straight in the store in one transaction per store, without loading the objects (Core
/// Data's `NSBatchUpdateRequest`). Execute it with ``ManagedObjectContext/execute(_:)``; the
/// context's registered objects do not change, so merge the updated IDs with
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// As in Core Data, no validation rule, `willSave` or derived attribute runs; values are
/// converted to the attributes' types, required attributes cannot be set to `nil`, and a value
/// that would give two objects the values of a uniqueness constraint fails the request. A
/// request that fails writes nothing. Persistent history records the updates.
public final class BatchUpdateRequest: PersistentStoreRequest {
    /// The name of the entity whose objects are updated.
    public let entityName: String
    /// The entity whose objects are updated, when the request was made with one; else it is
    /// looked up by name in the executing context's model.
    public let entity: EntityDescription?
    /// Which objects to update; `nil` (the default) updates all.
    public var predicate: FetchPredicate?
    /// Whether objects of sub-entities are updated too. The default is `true`.
    public var includesSubentities = true
    /// The new values, by attribute name (or ``AttributeDescription``): constants, or
    /// ``FetchExpression/constant(_:)`` expressions; `NSNull` or `nil` clears an optional attribute.
    public var propertiesToUpdate: [AnyHashable: Any]?
    /// What the result holds. The default is ``BatchUpdateRequestResultType/statusOnlyResultType``.
    public var resultType: BatchUpdateRequestResultType = .statusOnlyResultType

    /// Creates a request updating objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
        self.entity = nil
    }

    /// Creates a request updating objects of `entity`.
    public init(entity: EntityDescription) {
        self.entityName = entity.entityName
        self.entity = entity
    }

    /// Updates the objects.
    ///
    /// - Throws: ``CoreDataError``: `keyValueValidation` for an unknown attribute or a value of
    ///   another type, `validationMissingMandatoryProperty` for `nil` on a required attribute,
    ///   `managedObjectConstraintMerge` when two objects would share a uniqueness constraint's
    ///   values, `persistentStoreOperation` when a store fails; nothing is written then.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        let fetch = FetchRequest<ManagedObjectID>(entityName: entityName)
        fetch.entity = entity
        fetch.predicate = predicate
        fetch.includesSubentities = includesSubentities
        let entity = try fetch.resolveEntity(in: coordinator.managedObjectModel)
        var changes: [(column: Int, value: Value)] = []
        for (key, value) in propertiesToUpdate ?? [:] {
            let attribute = try BatchValues.attribute(key, of: entity)
            changes.append(
                (
                    try coordinator.layout(entity).columns[attribute.name]!,
                    try BatchValues.storeValue(value, for: attribute, entity: entity)
                ))
        }
        let columns = changes.map(\.column).sorted()
        var updated: [ManagedObjectID] = []
        var count = 0
        let wantsIDs = resultType == .updatedObjectIDsResultType
        try coordinator.withSaveLock { since in
            updated = []
            count = 0
            var found = try fetch.storedMatches(in: context)
            guard !columns.isEmpty else { return }
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
                    if wantsIDs { updated.append(found.objectID(of: matches[position], in: context)) }
                    count += 1
                }
                transactions[identifier] = transaction
            }
            try BatchWriter(coordinator: coordinator).commit(transactions, since: since)
        }
        switch resultType {
        case .statusOnlyResultType: return BatchUpdateResult(result: true, resultType: resultType)
        case .updatedObjectIDsResultType: return BatchUpdateResult(result: updated, resultType: resultType)
        case .updatedObjectsCountResultType: return BatchUpdateResult(result: count, resultType: resultType)
        }
    }
}

/// What executing a ``BatchUpdateRequest`` returns (Core Data's `NSBatchUpdateResult`).
public final class BatchUpdateResult: PersistentStoreResult {
    /// The result the request's ``BatchUpdateRequest/resultType`` asked for: `true`, the
    /// `[ManagedObjectID]` updated, or their number as `Int`.
    public let result: Any?
    /// The kind of ``result``.
    public let resultType: BatchUpdateRequestResultType

    init(result: Any?, resultType: BatchUpdateRequestResultType) {
        self.result = result
        self.resultType = resultType
    }
}
