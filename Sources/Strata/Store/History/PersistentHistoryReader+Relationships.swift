internal import StrataStore

/// One side of a to-many relationship kept in a join entity.
private struct JoinSide {
    /// The entity that declares the relationship.
    let entity: EntityDescription
    /// The relationship.
    let relationship: RelationshipDescription
    /// Where its pairs are kept.
    let join: JoinLayout
    /// The engine entity of the owner's hierarchy.
    let ownerStoreEntity: Int
}

extension PersistentHistoryReader {
    /// `changes` with an update of every object whose to-many relationship the record changed
    /// (a pair kept in a join entity added, removed or moved, or the inverse to-one that keeps
    /// it set or cleared: ``addInverseToManyOwners(of:store:owners:to:order:plans:)``), as Core Data reports it: the
    /// relationship joins the `updatedProperties` of the object's update, or makes a new update
    /// (whose ``PersistentHistoryChange/previousValues`` and `newValues` get the relationships'
    /// values from ``addToManyValues(to:store:engine:)``); objects the record inserted or
    /// deleted keep that change alone. A removed pair is known from the join row's prior image,
    /// so removals saved before stores kept prior rows are not reported.
    ///
    /// - Parameter plans: the plans of the entities met so far in the fetch.
    func relationshipChanges(
        _ record: HistoryTransaction, of transaction: PersistentHistoryTransaction, store: PersistentStore,
        after changes: [PersistentHistoryChange], plans: inout [ObjectIdentifier: HistoryEntityPlan]
    ) throws -> [PersistentHistoryChange] {
        var sides: [Int: [JoinSide]] = [:]
        var owners = HistoryRecordEntities(record: record, store: store, mapping: mapping)
        var touched: [ManagedObjectID: Set<PropertyDescription>] = [:]
        var order: [ManagedObjectID] = []
        for change in record.changes where mapping.entitiesByTag[change.entity] == nil {
            let entitySides = try sides[change.entity] ?? joinSides(of: change.entity)
            sides[change.entity] = entitySides
            guard let pair = change.row ?? change.previousRow else { continue }
            for side in entitySides {
                guard side.join.ownerColumn < pair.count, case .reference(let key) = pair[side.join.ownerColumn] else {
                    continue
                }
                let owner = owners.entity(of: key, in: side.ownerStoreEntity) ?? side.entity
                let id = ManagedObjectID(entity: owner, storeIdentifier: store.identifier, primaryKey: key)
                if touched[id] == nil { order.append(id) }
                touched[id, default: []].insert(side.relationship)
            }
        }
        try addInverseToManyOwners(
            of: record, store: store, owners: &owners, to: &touched, order: &order, plans: &plans)
        guard !touched.isEmpty else { return changes }
        let listsChanges = request.resultType != .changesOnly
        var result = changes.map { change -> PersistentHistoryChange in
            guard change.changeType == .update, let added = touched.removeValue(forKey: change.changedObjectID) else {
                return change
            }
            return PersistentHistoryChange(
                changeID: change.changeID, changedObjectID: change.changedObjectID, changeType: .update, tombstone: nil,
                updatedProperties: (change.updatedProperties ?? []).union(added), previousValues: change.previousValues,
                newValues: change.newValues, transaction: transaction, transactionListsChanges: listsChanges)
        }
        let settled = Set(changes.map(\.changedObjectID))
        var next = record.changes.count
        for id in order where !settled.contains(id) {
            result.append(
                PersistentHistoryChange(
                    changeID: Int64(record.sequence) << 24 | Int64(next & 0xFF_FFFF), changedObjectID: id,
                    changeType: .update,
                    tombstone: nil, updatedProperties: touched[id], previousValues: [:], newValues: [:],
                    transaction: transaction,
                    transactionListsChanges: listsChanges))
            next += 1
        }
        return result
    }

    /// The relationships whose pairs the join entity `storeEntity` keeps (two for a many-to-many
    /// relationship with an inverse).
    private func joinSides(of storeEntity: Int) throws -> [JoinSide] {
        var sides: [JoinSide] = []
        for entity in coordinator.managedObjectModel.entities {
            guard let layout = mapping.layouts[entity.entityName] else { continue }
            for case let relationship as RelationshipDescription in entity.ownProperties {
                guard let join = layout.joins[relationship.name], join.storeEntity == storeEntity else { continue }
                sides.append(
                    JoinSide(
                        entity: entity, relationship: relationship, join: join, ownerStoreEntity: layout.storeEntity))
            }
        }
        return sides
    }
}
