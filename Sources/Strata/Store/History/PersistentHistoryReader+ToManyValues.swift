import Foundation
internal import StrataStore

/// One change of a join entity's row (a to-many pair) in the history.
private struct PairChange {
    /// The transaction that made it.
    let sequence: UInt64
    /// The join row's key.
    let key: PrimaryKey
    /// The pair before the change (`nil`: absent, or saved before the store kept prior rows).
    let before: Row?
}

/// A to-many relationship of one object whose values a fetch reports.
private struct ToManyTarget: Hashable {
    /// The engine entity holding the pairs: the join entity, or for a one-to-many relationship
    /// kept through the inverse's column, the related objects' entity (each row a pair).
    let storeEntity: Int
    /// The owner's key.
    let owner: PrimaryKey
    /// The owner's column in the join entity, or the inverse to-one's column.
    let ownerColumn: Int
}

extension PersistentHistoryReader {
    /// Leaves the to-many values of the updates in `changes` that changed a to-many relationship
    /// to be added (``addToManyValues(to:store:engine:)``) the first time one of them is read.
    func deferToManyValues(of changes: ArraySlice<PersistentHistoryChange>, store: PersistentStore, engine: Store) {
        let updates = changes.filter { change in
            change.changeType == .update
                && (change.updatedProperties ?? []).contains { ($0 as? RelationshipDescription)?.isToMany == true }
        }
        guard !updates.isEmpty else { return }
        let pending = PendingToManyValues(changes: updates) { [self, weak engine] changes in
            guard let engine else { return }
            try? addToManyValues(to: changes[...], store: store, engine: engine)
        }
        for change in updates { change.pendingToManyValues = pending }
    }

    /// Sets the ``PersistentHistoryChange/previousValues`` and ``PersistentHistoryChange/newValues``
    /// of the to-many relationships that the updates in `changes` list in their
    /// `updatedProperties`: the related objects' IDs before and after the change, a
    /// `Set<ManagedObjectID>`, or for an ordered relationship an array in the relationship's order.
    /// A relationship is kept in a join entity (its rows are the pairs) or, one-to-many, in its
    /// inverse's column (the related objects' rows are the pairs).
    ///
    /// Each value is worked back from the relationship's stored pairs through the history after
    /// the change: one read of the pairs per relationship and one read of the history after the
    /// oldest change. Pairs removed before the store kept prior rows cannot be restored.
    func addToManyValues(to changes: ArraySlice<PersistentHistoryChange>, store: PersistentStore, engine: Store) throws
    {
        var wanted:
            [(
                change: PersistentHistoryChange, relationship: RelationshipDescription, target: ToManyTarget,
                join: JoinLayout?
            )] = []
        for change in changes where change.changeType == .update {
            for case let relationship as RelationshipDescription in change.updatedProperties ?? []
            where relationship.isToMany {
                let owner = change.changedObjectID.primaryKey
                if let join = Self.join(of: relationship, for: change.changedObjectID.entity, in: mapping) {
                    wanted.append(
                        (
                            change, relationship,
                            ToManyTarget(storeEntity: join.storeEntity, owner: owner, ownerColumn: join.ownerColumn),
                            join
                        ))
                } else if let (storeEntity, column) = inverseColumn(of: relationship) {
                    wanted.append(
                        (
                            change, relationship,
                            ToManyTarget(storeEntity: storeEntity, owner: owner, ownerColumn: column), nil
                        ))
                }
            }
        }
        guard let oldest = wanted.map({ UInt64($0.change.transaction?.transactionNumber ?? 0) }).min() else { return }

        // The pairs as stored now, and the newest sequence they include.
        var pairs: [ToManyTarget: [PrimaryKey: Row]] = [:]
        var newest: UInt64 = 0
        let targets = Set(wanted.map(\.target))
        try Self.storeCall {
            for _ in 0..<8 {
                newest = engine.lastSequence
                pairs = [:]
                for target in targets {
                    let keys = try engine.keys(
                        target.storeEntity, column: target.ownerColumn, matching: .equal(.reference(target.owner)))
                    var rows: [PrimaryKey: Row] = [:]
                    try engine.forEachRow(target.storeEntity, keys: keys) { key, row in rows[key] = row }
                    pairs[target] = rows
                }
                if engine.lastSequence == newest { break }
            }
        }
        // The pair changes after the oldest change, by relationship.
        let joinEntities = Set(targets.map(\.storeEntity))
        var log: [ToManyTarget: [PairChange]] = [:]
        try Self.storeCall {
            try engine.forEachHistoryTransaction(after: oldest - 1) { record in
                guard record.sequence <= newest else { return false }
                for change in record.changes where joinEntities.contains(change.entity) {
                    for row in [change.row, change.previousRow] {
                        guard let row else { continue }
                        for target in targets
                        where target.storeEntity == change.entity && row[target.ownerColumn] == .reference(target.owner)
                        {
                            if log[target]?.last.map({ $0.sequence == record.sequence && $0.key == change.key }) != true
                            {
                                log[target, default: []].append(
                                    PairChange(sequence: record.sequence, key: change.key, before: change.previousRow))
                            }
                        }
                    }
                }
                return true
            }
        }
        // Newest change first: undo the pair changes after it (its new value), then its own (its previous value).
        let ordered = wanted.sorted {
            ($0.change.transaction?.transactionNumber ?? 0) > ($1.change.transaction?.transactionNumber ?? 0)
        }
        var undone: [ToManyTarget: Int] = [:]
        for item in ordered {
            let sequence = UInt64(item.change.transaction?.transactionNumber ?? 0)
            let changesOfTarget = log[item.target] ?? []
            var next = undone[item.target] ?? changesOfTarget.count
            func undo(while belongs: (UInt64) -> Bool) {
                while next > 0 && belongs(changesOfTarget[next - 1].sequence) {
                    next -= 1
                    pairs[item.target]![changesOfTarget[next].key] = changesOfTarget[next].before
                }
            }
            undo { $0 > sequence }
            let after = value(of: pairs[item.target]!, item.relationship, item.target, item.join, store: store)
            undo { $0 == sequence }
            let before = value(of: pairs[item.target]!, item.relationship, item.target, item.join, store: store)
            undone[item.target] = next
            item.change.storedPreviousValues?[item.relationship.name] = before
            item.change.storedNewValues?[item.relationship.name] = after
        }
    }

    /// The related objects held by `pairs` for the owner of `target`: a set of IDs, or for an
    /// ordered relationship an array of IDs by position. Without `join`, each pair is a related
    /// object's row under its key, its entity told by its tag.
    private func value(
        of pairs: [PrimaryKey: Row], _ relationship: RelationshipDescription, _ target: ToManyTarget,
        _ join: JoinLayout?, store: PersistentStore
    ) -> Any {
        var related: [(id: ManagedObjectID, position: Value)] = []
        for (pairKey, row) in pairs where row[target.ownerColumn] == .reference(target.owner) {
            guard let destination = relationship.destinationEntity else { continue }
            guard let join else {
                var entity = destination
                if case .int(let tag) = row[0], let tagged = mapping.entitiesByTag[target.storeEntity]?[tag] {
                    entity = tagged
                }
                related.append(
                    (ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: pairKey), .null))
                continue
            }
            guard case .reference(let key) = row[join.otherColumn] else { continue }
            related.append(
                (
                    ManagedObjectID(entity: destination, storeIdentifier: store.identifier, primaryKey: key),
                    row.count > 2 ? row[2] : .null
                ))
        }
        guard relationship.isOrdered else { return Set(related.map(\.id)) }
        return related.sorted {
            $0.position < $1.position || (!($1.position < $0.position) && $0.id.primaryKey < $1.id.primaryKey)
        }.map(\.id)
    }

    /// The engine entity and column of the to-one inverse that keeps the one-to-many
    /// `relationship` (`nil` when the relationship has no such inverse).
    private func inverseColumn(of relationship: RelationshipDescription) -> (storeEntity: Int, column: Int)? {
        guard let inverse = relationship.inverseRelationship, !inverse.isToMany,
            let destination = relationship.destinationEntity,
            let layout = mapping.layouts[destination.entityName], let column = layout.columns[inverse.name]
        else { return nil }
        return (layout.storeEntity, column)
    }

    /// Where the pairs of `relationship` of objects of `entity` are kept: the layout of the
    /// entity, else of the nearest superentity that has one.
    private static func join(
        of relationship: RelationshipDescription, for entity: EntityDescription, in mapping: StoreMapping
    ) -> JoinLayout? {
        var current: EntityDescription? = entity
        while let candidate = current {
            if let join = mapping.layouts[candidate.entityName]?.joins[relationship.name] { return join }
            current = candidate.superentity
        }
        return nil
    }
}
