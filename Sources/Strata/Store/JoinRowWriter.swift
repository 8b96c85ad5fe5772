import OrderedCollections
internal import StrataStore

/// Writes the join rows of one transaction: the rows that keep a many-to-many or ordered
/// to-many relationship in a join entity, one row per (owner, other) pair with its position.
/// Remembers the join rows the transaction deletes, so none is deleted twice.
struct JoinRowWriter {
    /// The writer whose store holds the join rows.
    let writer: StoreWriter
    /// The join rows deleted so far, by join entity and key.
    private var deletedRows = Set<EntityKey>()

    /// Creates a join-row writer for one transaction of `writer`'s store.
    init(writer: StoreWriter) {
        self.writer = writer
    }

    /// Adds the join-row changes of `object`'s to-many relationships kept in join entities
    /// that changed (every one of an inserted object): pairs gone are deleted, new pairs
    /// inserted, and an ordered relationship whose order changed is written again whole.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectExternalRelationship` for an object of another
    ///   store; `persistentStoreOperation` when the store cannot be read.
    mutating func write(of object: ManagedObject, layout: EntityLayout, into transaction: inout Transaction) throws {
        let store = writer.store
        for (name, join) in layout.joins where join.writesPairs {
            let slot = object.runtime.slots[name]!
            guard object.changedSlots.contains(slot) || object.isInserted,
                let current = object.values[slot] as? OrderedSet<ManagedObjectID>
            else { continue }
            if let foreign = current.first(where: {
                !$0.isTemporaryID && $0.storeIdentifier != object.objectID.storeIdentifier
            }) {
                throw CoreDataError(
                    .managedObjectExternalRelationship,
                    "\(object.entity.entityName).\(name) holds \(foreign), which is saved in another store",
                    objectID: object.objectID, key: name)
            }
            let before = object.committed?[slot] as? OrderedSet<ManagedObjectID> ?? []
            let owner = object.objectID.primaryKey
            var rowsByOther: [Int64: Int64] = [:]
            try writer.coordinator.storeCall {
                for key in try store.rows.keys(
                    join.storeEntity, column: join.ownerColumn, matching: .equal(.reference(owner)), descending: false,
                    limit: nil)
                {
                    if let row = try store.rows.read(join.storeEntity, key: key),
                        case .reference(let other) = row[join.otherColumn]
                    {
                        rowsByOther[other] = key
                    }
                }
            }
            let rewriteAll = join.isOrdered && Array(before) != Array(current)
            for (other, key) in rowsByOther where rewriteAll || !current.contains(where: { $0.primaryKey == other }) {
                if deletedRows.insert(EntityKey(entity: join.storeEntity, key: key)).inserted {
                    transaction.delete(join.storeEntity, key: key)
                }
            }
            let pairs = current.enumerated().filter { rewriteAll || rowsByOther[$0.element.primaryKey] == nil }.filter {
                !$0.element.isTemporaryID
            }
            guard !pairs.isEmpty else { continue }
            var keys = store.rows.allocateKeys(for: join.storeEntity, count: pairs.count).makeIterator()
            for (position, id) in pairs {
                var pair: [Value] = [.null, .null, .int(Int64(position))]
                pair[join.ownerColumn] = .reference(owner)
                pair[join.otherColumn] = .reference(id.primaryKey)
                transaction.insert(join.storeEntity, key: keys.next()!, row: Row(pair))
            }
        }
    }

    /// Adds the deletion of every join row of the deleted `object`.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store cannot be read.
    mutating func delete(of object: ManagedObject, layout: EntityLayout, from transaction: inout Transaction) throws {
        let store = writer.store
        for join in layout.joins.values {
            let keys = try writer.coordinator.storeCall {
                try store.rows.keys(
                    join.storeEntity, column: join.ownerColumn,
                    matching: .equal(.reference(object.objectID.primaryKey)), descending: false, limit: nil)
            }
            for key in keys where deletedRows.insert(EntityKey(entity: join.storeEntity, key: key)).inserted {
                transaction.delete(join.storeEntity, key: key)
            }
        }
    }
}

/// An (engine entity, key) pair.
struct EntityKey: Hashable {
    var entity: Int
    var key: Int64
}
