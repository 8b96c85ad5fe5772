import Foundation
internal import StrataStore

/// The stored state of one object, as the store layer reads it for a context to realize the
/// object: its concrete entity (from the row's tag), the entity's layout and the row.
struct StoredSnapshot {
    /// The object's concrete entity.
    let entity: EntityDescription
    /// How the row's columns map to the entity's slots.
    let layout: EntityLayout
    /// The row (for an engine store, its encoded bytes).
    let row: StoredRow
}

extension StoreReader {
    /// The snapshots of the objects at `keys` of the engine entity `storeEntity`, in that order
    /// (`nil` where no row exists or its tag names no entity of the model), each block read
    /// once; with the store's newest sequence read just before the rows.
    func snapshots(storeEntity: Int, keys: [PrimaryKey]) throws -> (snapshots: [StoredSnapshot?], sequence: UInt64) {
        let mapping = try coordinator.mapping.get()
        let sequence = store.rows.lastSequence
        let rows = try coordinator.storeCall { () throws -> [StoredRow?] in
            if let engine = store.engineStore {
                return try engine.readEncoded(storeEntity, keys: keys).map { $0.map(StoredRow.encoded) }
            }
            return try store.rows.read(storeEntity, keys: keys).map { $0.map(StoredRow.decoded) }
        }
        let family = mapping.entitiesByTag[storeEntity]
        let snapshots = rows.map { row -> StoredSnapshot? in
            guard let row, case .int(let tag) = row[0], let entity = family?[tag],
                let layout = mapping.layouts[entity.entityName]
            else { return nil }
            return StoredSnapshot(entity: entity, layout: layout, row: row)
        }
        return (snapshots, sequence)
    }
}
