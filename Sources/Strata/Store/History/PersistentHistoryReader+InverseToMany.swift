internal import StrataStore

/// A to-one relationship whose column also keeps a to-many inverse (a one-to-many relationship
/// kept through the inverse's foreign key).
struct InverseToManySide {
    /// The to-one relationship's column.
    let column: Int
    /// The to-many inverse, declared by the to-one's destination.
    let inverse: RelationshipDescription
    /// The to-one's destination entity (the owner of the to-many).
    let owner: EntityDescription
    /// The engine entity of the owner's hierarchy.
    let ownerStoreEntity: Int
}

extension PersistentHistoryReader {
    /// Adds to `touched` (and `order`) the owners of the to-many relationships the record changed
    /// through their inverse's column: when an object's to-one is set, changed or cleared (an
    /// insert, an update of that column, a delete), the object it led to before and the one it
    /// leads to now each get their to-many in `updatedProperties`, as Core Data records an
    /// update of both departments when an employee moves. The previous object is known from the
    /// row's prior image, so updates saved before stores kept prior rows report only the new one.
    ///
    /// The sides of each entity are worked out once a fetch and kept in its plan in `plans`; the
    /// owners' entities come from `owners` (the record's lookups).
    func addInverseToManyOwners(
        of record: HistoryTransaction, store: PersistentStore, owners: inout HistoryRecordEntities,
        to touched: inout [ManagedObjectID: Set<PropertyDescription>],
        order: inout [ManagedObjectID], plans: inout [ObjectIdentifier: HistoryEntityPlan]
    ) throws {
        for change in record.changes {
            guard let family = mapping.entitiesByTag[change.entity],
                case .int(let tag)? = (change.row ?? change.previousRow ?? change.tombstone)?[0],
                let entity = family[tag]
            else { continue }
            let id = ObjectIdentifier(entity)
            let sides = plans[id]?.inverseToManySides ?? inverseToManySides(of: entity)
            plans[id]?.inverseToManySides = sides
            for side in sides {
                var before: PrimaryKey?, after: PrimaryKey?
                switch change.kind {
                case .insert:
                    after = Self.reference(change.row, side.column)
                case .update:
                    guard change.changedColumns.contains(side.column) else { continue }
                    before = Self.reference(change.previousRow, side.column)
                    after = Self.reference(change.row, side.column)
                case .delete:
                    before = Self.reference(change.previousRow ?? change.tombstone, side.column)
                }
                for key in [before, after].compactMap({ $0 }) where before != after {
                    let owner = owners.entity(of: key, in: side.ownerStoreEntity) ?? side.owner
                    let id = ManagedObjectID(entity: owner, storeIdentifier: store.identifier, primaryKey: key)
                    if touched[id] == nil { order.append(id) }
                    touched[id, default: []].insert(side.inverse)
                }
            }
        }
    }

    /// The to-one relationships of `entity` kept in a column whose to-many inverse has no join
    /// entity of its own.
    private func inverseToManySides(of entity: EntityDescription) -> [InverseToManySide] {
        guard let layout = mapping.layouts[entity.entityName] else { return [] }
        var sides: [InverseToManySide] = []
        for relationship in entity.relationshipsByName.values where !relationship.isToMany && !relationship.isTransient
        {
            guard let column = layout.columns[relationship.name], let inverse = relationship.inverseRelationship,
                inverse.isToMany,
                !inverse.isTransient, let owner = relationship.destinationEntity,
                let ownerLayout = mapping.layouts[owner.entityName],
                ownerLayout.joins[inverse.name] == nil
            else { continue }
            sides.append(
                InverseToManySide(
                    column: column, inverse: inverse, owner: owner, ownerStoreEntity: ownerLayout.storeEntity))
        }
        return sides
    }

    /// The key a reference column of `row` holds, if any.
    private static func reference(_ row: Row?, _ column: Int) -> PrimaryKey? {
        guard let row, column < row.count, case .reference(let key) = row[column] else { return nil }
        return key
    }
}
