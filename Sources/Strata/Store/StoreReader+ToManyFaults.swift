import Foundation
import OrderedCollections
internal import StrataStore

extension StoreReader {
    /// The IDs a to-many relationship of the saved object `id` (of `entity`) holds in this
    /// store, in the relationship's order: from the join entity of a many-to-many or ordered
    /// relationship, else from the fetch index of the inverse to-one column.
    ///
    /// - Returns: the IDs, and whether they carry their concrete entity (read from the rows'
    ///   tags); when not, they name the relationship's destination entity.
    func relatedIDs(
        of id: ManagedObjectID, entity: EntityDescription, _ relationship: RelationshipDescription
    ) throws -> (ids: OrderedSet<ManagedObjectID>, concrete: Bool) {
        guard let destination = relationship.destinationEntity else { return ([], true) }
        let layout = try coordinator.layout(entity)
        let owner = Value.reference(id.primaryKey)
        let identifier = store.identifier
        return try coordinator.storeCall {
            if let join = layout.joins[relationship.name] {
                var pairs: [(position: Int64, key: Int64)] = []
                for key in try store.rows.keys(
                    join.storeEntity, column: join.ownerColumn, matching: .equal(owner), descending: false, limit: nil)
                {
                    guard let row = try store.rows.read(join.storeEntity, key: key),
                        case .reference(let other) = row[join.otherColumn],
                        case .int(let position) = row[2]
                    else { continue }
                    pairs.append((position, other))
                }
                if join.isOrdered { pairs.sort { $0.position < $1.position } }
                return (
                    OrderedSet(
                        pairs.map {
                            ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0.key)
                        }), false
                )
            }
            guard let inverse = relationship.inverseRelationship, !inverse.isToMany else { return ([], true) }
            let destinationLayout = try coordinator.layout(destination)
            guard let column = destinationLayout.columns[inverse.name] else { return ([], true) }
            let keys = try store.rows.keys(
                destinationLayout.storeEntity, column: column, matching: .equal(owner), descending: false, limit: nil)
            guard destinationLayout.sharedColumns.contains(column) else {
                return (
                    OrderedSet(
                        keys.map { ManagedObjectID(entity: destination, storeIdentifier: identifier, primaryKey: $0) }),
                    false
                )
            }
            return (try concreteIDs(keys, of: destinationLayout), true)
        }
    }

    /// The IDs, with their concrete entity, of the rows at `keys` (in that order) that belong to
    /// `layout`'s entity or its sub-entities; rows of other entities of the hierarchy are left out.
    private func concreteIDs(_ keys: [PrimaryKey], of layout: EntityLayout) throws -> OrderedSet<ManagedObjectID> {
        let family = try coordinator.mapping.get().entitiesByTag[layout.storeEntity] ?? [:]
        var entities: [PrimaryKey: EntityDescription] = [:]
        try store.rows.forEachRow(layout.storeEntity, keys: keys, columns: [0]) { key, row in
            if case .int(let tag) = row[0], layout.tags.contains(tag), let entity = family[tag] {
                entities[key] = entity
            }
        }
        return OrderedSet(
            keys.compactMap { key in
                entities[key].map { ManagedObjectID(entity: $0, storeIdentifier: store.identifier, primaryKey: key) }
            })
    }
}
