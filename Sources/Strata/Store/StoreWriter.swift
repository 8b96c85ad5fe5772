import Foundation
import OrderedCollections
internal import StrataStore

/// The write side of the store layer for one store (the role of Core Data's
/// `NSIncrementalStore` saving a request): turns a save's ``StoreChangeSet`` into one engine
/// transaction (row encoding, join rows of many-to-many and ordered relationships) and commits
/// it; hands out permanent IDs (``StoreWriter+PermanentIDs``) and reads what a save checks
/// against the store: uniqueness constraints (``StoreWriter+Constraints``) and
/// optimistic-locking conflicts (``StoreWriter+Conflicts``). Contexts keep registered objects,
/// pending changes, undo and notifications, and apply the merge policy.
struct StoreWriter {
    /// The store written.
    let store: PersistentStore
    /// The coordinator whose mapping lays out the store's rows.
    let coordinator: PersistentStoreCoordinator

    /// What saves `changes`: an engine transaction with the rows of the inserted objects, the
    /// changed columns of the updated ones, deletions of the deleted ones and of their join rows,
    /// and the join rows of changed to-many relationships kept in join entities. When
    /// `makingRowsAsEncoded` and the save only inserts many objects that write no join rows, the
    /// transaction has no operations and the save's ``StoreSave/inserted`` rows are made as the
    /// engine encodes them (``InsertedRows``), never held all at once.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectExternalRelationship` for a relationship to an
    ///   object of another store; `persistentStoreOperation` when the store cannot be read;
    ///   `coreData` for an object of an entity the model does not have.
    func save(for changes: StoreChangeSet, makingRowsAsEncoded: Bool) throws -> StoreSave {
        let mapping = try coordinator.mapping.get()
        var transaction = Transaction(author: changes.author, contextName: changes.contextName)
        transaction.condition = changes.condition
        transaction.consumerCursors = changes.consumerCursors
        // The inserted objects' entities added here, on the context's queue: the threads that
        // share out the rows only look them up.
        var fills = try RowFills(
            for: changes.inserted, mapping: mapping, columnCounts: mapping.schema.entities.map { $0.columns.count })
        if makingRowsAsEncoded, let inserted = rowsMadeAsEncoded(changes, fills: fills) {
            return StoreSave(transaction: transaction, inserted: inserted)
        }
        var joins = JoinRowWriter(writer: self)
        let inserted = insertedRows(changes.inserted, fills: fills)
        for (index, object) in changes.inserted.enumerated() {
            let layout = try mapping.requiredLayout(of: object.entity)
            if let failure = inserted.failure, failure.index == index { throw failure.error }
            let row = try inserted.rows.map { $0[index] } ?? fills.row(of: object)
            transaction.insert(layout.storeEntity, key: object.objectID.primaryKey, row: row)
            try joins.write(of: object, layout: layout, into: &transaction)
        }
        for object in changes.updated {
            let layout = try mapping.requiredLayout(of: object.entity)
            let columns = Set(object.changedSlots.lazy.map { layout.slotColumns[$0] }.filter { $0 >= 0 }).sorted()
            if !columns.isEmpty {
                transaction.update(
                    layout.storeEntity, key: object.objectID.primaryKey, row: try fills.row(of: object),
                    changedColumns: columns)
            }
            try joins.write(of: object, layout: layout, into: &transaction)
        }
        for object in changes.deleted {
            let layout = try mapping.requiredLayout(of: object.entity)
            transaction.delete(layout.storeEntity, key: object.objectID.primaryKey)
            try joins.delete(of: object, layout: layout, from: &transaction)
        }
        return StoreSave(transaction: transaction, inserted: nil)
    }

    /// Commits `save` through the store (its replicator, its durability); returns the sequence
    /// it committed at.
    ///
    /// - Throws: ``SaveConflict`` when the engine refuses the commit because its condition
    ///   failed; ``CoreDataError`` `persistentStoreSave` when the store cannot save; what making
    ///   an inserted row throws (as ``save(for:makingRowsAsEncoded:)`` would have).
    func commit(_ save: StoreSave) throws -> UInt64 {
        do {
            guard let inserted = save.inserted else { return try store.commit(save.transaction) }
            return try store.commit(save.transaction, inserting: inserted)
        } catch let error as StoreError where error.code == .writeConflict {
            throw SaveConflict(store: store.identifier)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreSave, "the store could not save: \(error.message)", underlyingError: error)
        }
    }

    /// The most threads a save's rows are made on: the engine's `commitThreads`.
    private var threads: Int { store.engineStore?.configuration.commitThreads ?? 1 }

    /// Whether the rows of the inserted `objects` are made on other threads than the context's:
    /// when the store may use more than one and they are many, no value may go through user code
    /// (a transformable attribute's transformer, on the context's queue only) and no object is
    /// loaded lazily.
    private func makesRowsAside(_ objects: [ManagedObject]) -> Bool {
        threads > 1 && objects.count >= 2 * ParallelParts.rowsPerPart
            && objects.allSatisfy({ $0.lazyRow == nil && !$0.runtime.loads.contains(.converted) })
    }

    /// The rows of the inserted objects of `changes` made as the engine encodes them, when the
    /// save only inserts objects whose rows are made aside (``makesRowsAside(_:)``) and none
    /// writes join rows; else `nil`.
    private func rowsMadeAsEncoded(_ changes: StoreChangeSet, fills: RowFills) -> InsertedRows? {
        let objects = changes.inserted
        guard changes.updated.isEmpty, changes.deleted.isEmpty, makesRowsAside(objects) else { return nil }
        guard !fills.entities.contains(where: \.writesJoinRows) else { return nil }
        // The context's queue waits while the objects are read, and nothing changes them.
        let shared = ParallelParts.ReadOnly(objects)
        return InsertedRows(
            count: objects.count, entities: Set(fills.entities.map(\.storeEntity)),
            target: { index in
                let object = shared.value[index]
                return (fills.entities[fills.existingIndex(of: object)!].storeEntity, object.objectID.primaryKey)
            },
            make: { index, row in
                let object = shared.value[index]
                try fills.fill(&row, of: object, entity: fills.existingIndex(of: object)!)
            })
    }

    /// The rows of many inserted `objects`, made a part of them a core at once: every row up to
    /// the first object whose row fails, and that failure. `rows` is `nil` (the caller makes
    /// each row) unless ``makesRowsAside(_:)``.
    private func insertedRows(
        _ objects: [ManagedObject], fills: RowFills
    ) -> (rows: [Row]?, failure: (index: Int, error: any Error)?) {
        guard makesRowsAside(objects) else { return (nil, nil) }
        // The context's queue waits while the objects are read, and nothing changes them.
        let shared = ParallelParts.ReadOnly(objects)
        let parts = ParallelParts.map(count: objects.count, minimumPerPart: ParallelParts.rowsPerPart, cores: threads) {
            range in
            var rows: [Row] = []
            rows.reserveCapacity(range.count)
            for index in range {
                let object = shared.value[index]
                do {
                    var row = Row([])
                    try fills.fill(&row, of: object, entity: fills.existingIndex(of: object)!)
                    rows.append(row)
                } catch {
                    return SharedRows(rows: rows, failure: (index, error))
                }
            }
            return SharedRows(rows: rows, failure: nil)
        }
        var rows: [Row] = []
        rows.reserveCapacity(objects.count)
        for part in parts {
            rows += part.rows
            if let failure = part.failure { return (rows, failure) }
        }
        return (rows, nil)
    }

    /// The rows one thread made, up to its first failure.
    private struct SharedRows: Sendable {
        var rows: [Row]
        var failure: (index: Int, error: any Error)?
    }
}
