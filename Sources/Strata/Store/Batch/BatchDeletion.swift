import OrderedCollections
internal import StrataStore

/// The rows a ``BatchDeleteRequest`` deletes and the rows it changes to keep relationships
/// consistent, computed from the stores without materializing objects.
struct BatchDeletion {
    let coordinator: PersistentStoreCoordinator
    /// The objects deleted, cascaded deletions included, in the order they were found.
    private(set) var deleted = OrderedSet<ManagedObjectID>()
    /// The whole current row of each of ``deleted``, by position, where the caller gave it.
    private var deletedRows: [Row?] = []
    /// The join rows deleted, by store identifier.
    private var joinRows: [String: Set<EntityKey>] = [:]

    init(coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
    }

    /// Adds `ids` and what their cascade rules reach; checks deny rules.
    ///
    /// - Throws: ``CoreDataError`` `validationRelationshipDeniedDelete`, or `coreData` for a
    ///   temporary ID or one of a store the coordinator does not have.
    mutating func delete(_ ids: [ManagedObjectID]) throws {
        try delete(ids, rows: nil)
    }

    /// Adds `ids` and what their cascade rules reach; checks deny rules.
    ///
    /// - Parameter rows: the current stored rows of `ids`, by position, where the caller read
    ///   them (whole rows); the others are read from the stores.
    /// - Throws: as ``delete(_:)``.
    private mutating func delete(_ ids: [ManagedObjectID], rows: [Row?]?) throws {
        let stored = try storedRows(
            of: rows.map { rows in ids.indices.compactMap { rows[$0] == nil ? ids[$0] : nil } } ?? ids)
        // The objects given are looked up in `rows` or `stored`; those their cascade rules
        // reach (without a position), one by one.
        var pending = ids.enumerated().map { ($1, Optional($0)) }
        while let (id, position) = pending.popLast() {
            guard !deleted.contains(id) else { continue }
            guard !id.isTemporaryID, let identifier = id.storeIdentifier,
                coordinator.store(identifier: identifier) != nil
            else {
                throw CoreDataError(
                    .coreData, "\(id) is not the ID of a saved object of this coordinator's stores", objectID: id)
            }
            let known = position.flatMap { rows?[$0] }
            let group = position != nil ? stored[ObjectIdentifier(id.entity)] : nil
            guard
                let row = try known
                    ?? (group?.store == identifier ? group?.rows[id.primaryKey] : coordinator.row(for: id))
            else { continue }
            deleted.append(id)
            deletedRows.append(known)
            for relationship in id.entity.relationshipsByName.values where !relationship.isTransient {
                switch relationship.deleteRule {
                case .denyDeleteRule:
                    if !(try related(relationship, of: id, row: row)).isEmpty {
                        throw CoreDataError(
                            .validationRelationshipDeniedDelete,
                            "\(id.entity.entityName).\(relationship.name) denies deleting an object it holds objects in",
                            objectID: id, key: relationship.name)
                    }
                case .cascadeDeleteRule:
                    pending += try related(relationship, of: id, row: row).map { ($0, nil) }
                default:
                    continue
                }
            }
        }
    }

    /// Adds the objects `found` (a fetch's matches) with the rows the fetch read of them
    /// (``knownRows(of:)``), and what their cascade rules reach; checks deny rules.
    ///
    /// - Throws: as ``delete(_:rows:)``.
    mutating func delete(_ found: StoredMatches, in context: ManagedObjectContext) throws {
        try delete(found.matches.map { found.objectID(of: $0, in: context) }, rows: Self.knownRows(of: found))
    }

    /// Commits the ``transactions(author:contextName:sequences:)`` through a ``BatchWriter``,
    /// each store's under the condition that nothing it read changed since its sequence in `since`.
    ///
    /// - Throws: what ``transactions(author:contextName:sequences:)`` and
    ///   ``BatchWriter/commit(_:since:)`` throw.
    mutating func commit(
        author: String?, contextName: String?, sequences: [String: UInt64], since: [String: UInt64]
    ) throws {
        let transactions = try transactions(author: author, contextName: contextName, sequences: sequences)
        try BatchWriter(coordinator: coordinator).commit(transactions, since: since)
    }

    /// One transaction per store: the deletions, the join rows of the deleted objects and the
    /// surviving objects' to-one inverses set to `nil`; the rows given to ``delete(_:rows:)``
    /// go with them as ``Transaction/knownRows``, as of `sequences` (by store identifier), so
    /// that the store does not read them again.
    ///
    /// - Throws: ``CoreDataError`` `validationMissingMandatoryProperty` when a surviving object
    ///   would lose a required to-one relationship.
    private mutating func transactions(
        author: String?, contextName: String?, sequences: [String: UInt64] = [:]
    ) throws -> [String: Transaction] {
        // Per store: its transaction and the known rows of its operations, found by a short
        // linear search only when the store changes (a request deletes from one or two).
        var perStore: [(identifier: String, transaction: Transaction, rows: [Row?])] = []
        func slot(_ identifier: String) -> Int {
            if let slot = perStore.firstIndex(where: { $0.identifier == identifier }) { return slot }
            perStore.append((identifier, Transaction(author: author, contextName: contextName), []))
            return perStore.count - 1
        }
        var nullified: [String: [EntityKey: (row: Row, columns: Set<Int>)]] = [:]
        // What each entity's objects need, worked out once per entity rather than once per object,
        // and kept at hand while the objects deleted are of one entity and store.
        var entityNeeds: [ObjectIdentifier: DeletionNeeds] = [:]
        var current:
            (entity: ObjectIdentifier, identifier: String, store: PersistentStore, slot: Int, needs: DeletionNeeds)?
        // In key order: a transaction writing each key once in rising order lets the store keep
        // no image per key while it commits.
        for position in deleted.indices.sorted(by: { deleted[$0].primaryKey < deleted[$1].primaryKey }) {
            let id = deleted[position]
            // ``delete(_:rows:)`` admits saved objects only: permanent IDs, with a store identifier.
            let identifier = id.storeIdentifier!
            let entityID = ObjectIdentifier(id.entity)
            if current?.entity != entityID || current?.identifier != identifier {
                // The store may have been removed since the objects were found.
                guard let store = coordinator.store(identifier: identifier) else {
                    throw CoreDataError(
                        .coreData, "\(id) is not the ID of a saved object of this coordinator's stores", objectID: id)
                }
                let needs = try entityNeeds[entityID] ?? deletionNeeds(of: id.entity)
                entityNeeds[entityID] = needs
                current = (entityID, identifier, store, slot(identifier), needs)
            }
            let (_, _, store, storeSlot, needs) = current!
            perStore[storeSlot].transaction.delete(needs.storeEntity, key: id.primaryKey)
            perStore[storeSlot].rows.append(deletedRows[position])
            for (joinEntity, column) in needs.pairs {
                let keys = try coordinator.storeCall {
                    try store.rows.keys(
                        joinEntity, column: column, matching: .equal(.reference(id.primaryKey)), descending: false,
                        limit: nil)
                }
                for key in keys
                where joinRows[identifier, default: []].insert(EntityKey(entity: joinEntity, key: key)).inserted {
                    perStore[storeSlot].transaction.delete(joinEntity, key: key)
                    perStore[storeSlot].rows.append(nil)
                }
            }
            guard !needs.nullifying.isEmpty, let row = try coordinator.row(for: id) else { continue }
            for relationship in needs.nullifying {
                let inverse = relationship.inverseRelationship!
                for other in try related(relationship, of: id, row: row) where !deleted.contains(other) {
                    let otherLayout = try coordinator.layout(other.entity)
                    guard let column = otherLayout.columns[inverse.name] else { continue }
                    let key = EntityKey(entity: otherLayout.storeEntity, key: other.primaryKey)
                    var entry =
                        try nullified[identifier, default: [:]][key]
                        ?? (coordinator.row(for: other).map { ($0, []) } ?? (Row([]), []))
                    guard entry.row.values.indices.contains(column),
                        entry.row.values[column] == .reference(id.primaryKey)
                    else { continue }
                    if !inverse.isOptional {
                        throw CoreDataError(
                            .validationMissingMandatoryProperty,
                            "\(other.entity.entityName).\(inverse.name) is required and would lose \(id)",
                            objectID: other, key: inverse.name)
                    }
                    entry.row.values[column] = .null
                    entry.columns.insert(column)
                    nullified[identifier, default: [:]][key] = entry
                }
            }
        }
        for (identifier, rows) in nullified {
            let storeSlot = slot(identifier)
            for (key, entry) in rows {
                perStore[storeSlot].transaction.update(
                    key.entity, key: key.key, row: entry.row, changedColumns: entry.columns.sorted())
                perStore[storeSlot].rows.append(nil)
            }
        }
        var transactions: [String: Transaction] = [:]
        for (identifier, var transaction, rows) in perStore {
            if let sequence = sequences[identifier], rows.contains(where: { $0 != nil }) {
                transaction.knownRows = rows
                transaction.knownRowsSequence = sequence
            }
            transactions[identifier] = transaction
        }
        return transactions
    }

    /// The rows of the objects a fetch found, as far as a deletion and the store's commit read
    /// them: an engine store's encoded row decoded in its entity tag, its to-one references
    /// (what delete rules read) and the columns the store takes from the rows it deletes
    /// (``Store/priorRowColumns(_:)``: every column when it keeps history), the others `null`;
    /// an in-memory store's row as it is; `nil` where the fetch read none.
    private static func knownRows(of found: StoredMatches) -> [Row?] {
        let storeEntity = found.plan.layout.storeEntity
        // The columns to decode, per store (`nil`: every column).
        let projections = found.stores.stores.map { store -> [Bool]? in
            guard let engine = store.engineStore, storeEntity < engine.schema.entities.count,
                let prior = engine.priorRowColumns(storeEntity)
            else { return nil }
            let columns = engine.schema.entities[storeEntity].columns
            var projection = columns.map { if case .reference = $0.type { true } else { false } }
            projection[0] = true
            for column in prior { projection[column] = true }
            return projection
        }
        return found.matches.map { match in
            switch match.row {
            case .encoded(let row)?: row.decoded(projection: projections[match.store])
            case .decoded(let row)?: row
            case nil: nil
            }
        }
    }

    /// What deleting an object of one entity takes, the same for all of them.
    private struct DeletionNeeds {
        /// The engine entity holding the entity's rows.
        var storeEntity: Int
        /// The join entities with the column that holds the object: the object's own pairs, and
        /// those of inverse-less to-many relationships holding it.
        var pairs: [(Int, Int)]
        /// The relationships whose inverse is a to-one, set to `nil` on the objects they hold.
        var nullifying: [RelationshipDescription]
    }

    /// What deleting an object of `entity` takes.
    private func deletionNeeds(of entity: EntityDescription) throws -> DeletionNeeds {
        let layout = try coordinator.layout(entity)
        let nullifying = entity.relationshipsByName.values.filter { relationship in
            guard !relationship.isTransient, let inverse = relationship.inverseRelationship else { return false }
            return !inverse.isToMany && !inverse.isTransient
        }
        return DeletionNeeds(
            storeEntity: layout.storeEntity,
            pairs: try layout.joins.values.map { ($0.storeEntity, $0.ownerColumn) } + pairsHolding(entity),
            nullifying: nullifying)
    }

    /// The stored rows of the objects `ids` that exist, by entity (with the store read) and key,
    /// read block by block, with only their to-one relationship columns decoded (what
    /// ``related(_:of:row:)`` reads). An ID of another store than its entity's first is left out.
    private func storedRows(
        of ids: [ManagedObjectID]
    ) throws -> [ObjectIdentifier: (store: String, rows: [PrimaryKey: Row])] {
        var groups: [ObjectIdentifier: (entity: EntityDescription, store: String, keys: [PrimaryKey])] = [:]
        for id in ids where !id.isTemporaryID {
            guard let identifier = id.storeIdentifier else { continue }
            // An entity's objects are in one store: an ID of another store is read on its own.
            guard groups[ObjectIdentifier(id.entity)].map({ $0.store == identifier }) ?? true else { continue }
            groups[ObjectIdentifier(id.entity), default: (id.entity, identifier, [])].keys.append(id.primaryKey)
        }
        var rows: [ObjectIdentifier: (store: String, rows: [PrimaryKey: Row])] = [:]
        for (entityID, group) in groups {
            guard let store = coordinator.store(identifier: group.store) else { continue }
            let layout = try coordinator.layout(group.entity)
            let columns = group.entity.relationshipsByName.values.filter { !$0.isToMany }.compactMap {
                layout.columns[$0.name]
            }
            var found: [PrimaryKey: Row] = [:]
            found.reserveCapacity(group.keys.count)
            try coordinator.storeCall {
                try store.rows.forEachRow(layout.storeEntity, keys: group.keys, columns: columns) { key, row in
                    found[key] = row
                }
            }
            rows[entityID] = (group.store, found)
        }
        return rows
    }

    /// The join entities of inverse-less to-many relationships that can hold objects of
    /// `entity`, with the column holding them.
    private func pairsHolding(_ entity: EntityDescription) throws -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        for owner in coordinator.managedObjectModel.entities {
            for case let relationship as RelationshipDescription in owner.ownProperties
            where relationship.isToMany && relationship.inverseRelationship == nil && !relationship.isTransient {
                guard let destination = relationship.destinationEntity,
                    entity.isKindOf(entity: destination) || destination.isKindOf(entity: entity),
                    let join = try coordinator.layout(owner).joins[relationship.name]
                else { continue }
                pairs.append((join.storeEntity, join.otherColumn))
            }
        }
        return pairs
    }

    /// The stored objects `relationship` of the object `id` (whose row is `row`) holds.
    private func related(
        _ relationship: RelationshipDescription, of id: ManagedObjectID, row: Row
    ) throws -> [ManagedObjectID] {
        guard let destination = relationship.destinationEntity, let identifier = id.storeIdentifier,
            let store = coordinator.store(identifier: identifier)
        else { return [] }
        let layout = try coordinator.layout(id.entity)
        let destinationLayout = try coordinator.layout(destination)
        var keys: [PrimaryKey] = []
        if !relationship.isToMany {
            if let column = layout.columns[relationship.name], case .reference(let key) = row[column] { keys = [key] }
        } else if let join = layout.joins[relationship.name] {
            let pairs = try coordinator.storeCall {
                try store.rows.keys(
                    join.storeEntity, column: join.ownerColumn, matching: .equal(.reference(id.primaryKey)),
                    descending: false, limit: nil)
            }
            for pair in pairs {
                if let joinRow = try coordinator.storeCall({ try store.rows.read(join.storeEntity, key: pair) }),
                    case .reference(let key) = joinRow[join.otherColumn]
                {
                    keys.append(key)
                }
            }
        } else if let inverse = relationship.inverseRelationship, let column = destinationLayout.columns[inverse.name] {
            keys = try coordinator.storeCall {
                try store.rows.keys(
                    destinationLayout.storeEntity, column: column, matching: .equal(.reference(id.primaryKey)),
                    descending: false, limit: nil)
            }
        }
        var ids: [ManagedObjectID] = []
        for key in keys {
            guard
                let other = try coordinator.storeCall({ try store.rows.read(destinationLayout.storeEntity, key: key) }),
                case .int(let tag) = other[0], destinationLayout.tags.contains(tag),
                let entity = try coordinator.concreteEntity(of: other, storeEntity: destinationLayout.storeEntity)
            else { continue }
            ids.append(ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: key))
        }
        return ids
    }
}
