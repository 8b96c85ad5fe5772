import OrderedCollections
import StrataStore

/// The rows a ``BatchDeleteRequest`` deletes and the rows it changes to keep relationships
/// consistent, computed from the stores without materializing objects.
struct BatchDeletion {
    let coordinator: PersistentStoreCoordinator
    /// The objects deleted, cascaded deletions included, in the order they were found.
    private(set) var deleted = OrderedSet<ManagedObjectID>()
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
        var pending = ids
        while let id = pending.popLast() {
            guard !deleted.contains(id) else { continue }
            guard !id.isTemporaryID, let identifier = id.storeIdentifier, coordinator.store(identifier: identifier) != nil else {
                throw CoreDataError(.coreData, "\(id) is not the ID of a saved object of this coordinator's stores", objectID: id)
            }
            guard let row = try coordinator.row(for: id) else { continue }
            deleted.append(id)
            for relationship in id.entity.relationshipsByName.values where !relationship.isTransient {
                switch relationship.deleteRule {
                case .denyDeleteRule:
                    if !(try related(relationship, of: id, row: row)).isEmpty {
                        throw CoreDataError(
                            .validationRelationshipDeniedDelete, "\(id.entity.name).\(relationship.name) denies deleting an object it holds objects in",
                            objectID: id, key: relationship.name)
                    }
                case .cascadeDeleteRule:
                    pending += try related(relationship, of: id, row: row)
                default:
                    continue
                }
            }
        }
    }

    /// One transaction per store: the deletions, the join rows of the deleted objects and the
    /// surviving objects' to-one inverses set to `nil`.
    ///
    /// - Throws: ``CoreDataError`` `validationMissingMandatoryProperty` when a surviving object
    ///   would lose a required to-one relationship.
    mutating func transactions(author: String?, contextName: String?) throws -> [String: Transaction] {
        var transactions: [String: Transaction] = [:]
        var nullified: [String: [EntityKey: (row: Row, columns: Set<Int>)]] = [:]
        for id in deleted {
            let identifier = id.storeIdentifier!
            let layout = try coordinator.layout(id.entity)
            transactions[identifier, default: Transaction(author: author, contextName: contextName)].delete(layout.storeEntity, key: id.primaryKey)
            let store = coordinator.store(identifier: identifier)!
            // The object's own pairs, and those of inverse-less to-many relationships holding it.
            let pairs = layout.joins.values.map { ($0.storeEntity, $0.ownerColumn) } + (try pairsHolding(id.entity))
            for (joinEntity, column) in pairs {
                let keys = try coordinator.storeCall {
                    try store.rows.keys(joinEntity, column: column, matching: .equal(.reference(id.primaryKey)), descending: false, limit: nil)
                }
                for key in keys where joinRows[identifier, default: []].insert(EntityKey(entity: joinEntity, key: key)).inserted {
                    transactions[identifier]!.delete(joinEntity, key: key)
                }
            }
            guard let row = try coordinator.row(for: id) else { continue }
            for relationship in id.entity.relationshipsByName.values where !relationship.isTransient {
                guard let inverse = relationship.inverseRelationship, !inverse.isToMany, !inverse.isTransient else { continue }
                for other in try related(relationship, of: id, row: row) where !deleted.contains(other) {
                    let otherLayout = try coordinator.layout(other.entity)
                    guard let column = otherLayout.columns[inverse.name] else { continue }
                    let key = EntityKey(entity: otherLayout.storeEntity, key: other.primaryKey)
                    var entry = try nullified[identifier, default: [:]][key] ?? (coordinator.row(for: other).map { ($0, []) } ?? (Row([]), []))
                    guard entry.row.values.indices.contains(column), entry.row.values[column] == .reference(id.primaryKey) else { continue }
                    if !inverse.isOptional {
                        throw CoreDataError(
                            .validationMissingMandatoryProperty, "\(other.entity.name).\(inverse.name) is required and would lose \(id)",
                            objectID: other, key: inverse.name)
                    }
                    entry.row.values[column] = .null
                    entry.columns.insert(column)
                    nullified[identifier, default: [:]][key] = entry
                }
            }
        }
        for (identifier, rows) in nullified {
            for (key, entry) in rows {
                transactions[identifier]!.update(key.entity, key: key.key, row: entry.row, changedColumns: entry.columns.sorted())
            }
        }
        return transactions
    }

    /// The join entities of inverse-less to-many relationships that can hold objects of
    /// `entity`, with the column holding them.
    private func pairsHolding(_ entity: EntityDescription) throws -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        for owner in coordinator.managedObjectModel.entities {
            for case let relationship as RelationshipDescription in owner.ownProperties
            where relationship.isToMany && relationship.inverseRelationship == nil && !relationship.isTransient {
                guard let destination = relationship.destinationEntity, entity.isKindOf(entity: destination) || destination.isKindOf(entity: entity),
                    let join = try coordinator.layout(owner).joins[relationship.name]
                else { continue }
                pairs.append((join.storeEntity, join.otherColumn))
            }
        }
        return pairs
    }

    /// The stored objects `relationship` of the object `id` (whose row is `row`) holds.
    private func related(_ relationship: RelationshipDescription, of id: ManagedObjectID, row: Row) throws -> [ManagedObjectID] {
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
                try store.rows.keys(join.storeEntity, column: join.ownerColumn, matching: .equal(.reference(id.primaryKey)), descending: false, limit: nil)
            }
            for pair in pairs {
                if let joinRow = try coordinator.storeCall({ try store.rows.read(join.storeEntity, key: pair) }), case .reference(let key) = joinRow[join.otherColumn] {
                    keys.append(key)
                }
            }
        } else if let inverse = relationship.inverseRelationship, let column = destinationLayout.columns[inverse.name] {
            keys = try coordinator.storeCall {
                try store.rows.keys(destinationLayout.storeEntity, column: column, matching: .equal(.reference(id.primaryKey)), descending: false, limit: nil)
            }
        }
        var ids: [ManagedObjectID] = []
        for key in keys {
            guard let other = try coordinator.storeCall({ try store.rows.read(destinationLayout.storeEntity, key: key) }),
                case .int(let tag) = other[0], destinationLayout.tags.contains(tag),
                let entity = try coordinator.concreteEntity(of: other, storeEntity: destinationLayout.storeEntity)
            else { continue }
            ids.append(ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: key))
        }
        return ids
    }
}
