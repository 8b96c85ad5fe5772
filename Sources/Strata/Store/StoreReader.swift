import Foundation
internal import StrataStore

/// The read side of the store layer for one store (the role of Core Data's
/// `NSIncrementalStore`): loads the snapshot of an object ID, through the coordinator's
/// ``RowCache`` when the store is read as it is now, and executes fetch plans into rows, IDs
/// and counts (``StoreReader+FetchExecution``). Rows become object values through
/// ``RowDecoding``. Contexts keep registered objects and pending changes and ask the store
/// layer for everything stored.
struct StoreReader {
    /// The store as it is read: the store itself, or its view pinned to a query generation.
    let store: PersistentStore
    /// The coordinator whose mapping lays out the store's rows.
    let coordinator: PersistentStoreCoordinator
    /// Whether ``store`` is read as it is now (not pinned to a query generation): only then
    /// the row cache serves it and keeps its rows.
    let isCurrent: Bool

    /// The stored row of the object `id` names, with the store's newest sequence read just
    /// before it: no commit after that sequence is reflected in an object loaded from the row,
    /// so a save finding the store still at that sequence needs no conflict check. `nil` when
    /// no row exists. A current store's row comes from the coordinator's row cache when it
    /// holds the row as of the store's newest sequence, and is kept there otherwise.
    /// An engine store's row is read as its encoded bytes (``EncodedRow``), its sequence and
    /// place taken under one engine lock (``Store/locate(_:key:)``): a fault takes that lock and
    /// the row cache's, and on a miss the block cache's and the row cache's again.
    ///
    /// - Parameter layout: the layout of `id`'s entity, which the caller decodes the row with.
    func snapshot(for id: ManagedObjectID, layout: EntityLayout) throws -> (row: StoredRow?, sequence: UInt64) {
        let storeEntity = layout.storeEntity
        if let engine = store.engineStore {
            let (sequence, located) = try coordinator.storeCall { try engine.locate(storeEntity, key: id.primaryKey) }
            guard let located else { return (nil, sequence) }
            if isCurrent,
                let row = coordinator.rowCache.row(store, entity: storeEntity, key: id.primaryKey, sequence: sequence)
            {
                return (row, sequence)
            }
            let row = StoredRow.encoded(try coordinator.storeCall { try engine.readEncoded(located) })
            if isCurrent {
                coordinator.rowCache.keep(row, store, entity: storeEntity, key: id.primaryKey, sequence: sequence)
            }
            return (row, sequence)
        }
        let sequence = store.rows.lastSequence
        if isCurrent,
            let row = coordinator.rowCache.row(store, entity: storeEntity, key: id.primaryKey, sequence: sequence)
        {
            return (row, sequence)
        }
        let row = try coordinator.storeCall { try store.rows.read(storeEntity, key: id.primaryKey) }.map(
            StoredRow.decoded)
        if isCurrent, let row {
            coordinator.rowCache.keep(row, store, entity: storeEntity, key: id.primaryKey, sequence: sequence)
        }
        return (row, sequence)
    }
}
