internal import StrataStore

extension StoreWriter {
    /// The optimistic-locking conflict of saving `object` (updated or deleted, stored in this
    /// store, last read with the values `committed`): `nil` when nothing was committed since it
    /// was read, or its stored row still holds `committed`; else the conflict, with the stored
    /// values (`nil` when someone else deleted the row) and the slots the store changed.
    ///
    /// - Throws: ``CoreDataError`` when the store cannot be read or a row cannot be decoded.
    func conflict(for object: ManagedObject, committed: [Any?], context: ManagedObjectContext) throws -> MergeConflict?
    {
        let sequence = store.rows.lastSequence
        // Nothing was committed since the object was read: there can be no conflict.
        if object.snapshotSequence != 0, sequence == object.snapshotSequence { return nil }
        let layout = try coordinator.layout(object.entity)
        let stored = try coordinator.storeCall {
            try store.rows.read(layout.storeEntity, key: object.objectID.primaryKey)
        }.map {
            try RowDecoding.values(
                of: object.runtime, from: $0, layout: layout, storeIdentifier: store.identifier, context: context)
        }
        let storeChanged = MergeConflict.persistentSlots(of: object.runtime).filter {
            !FetchValue.equal(committed[$0], stored?[$0])
        }
        guard stored == nil || !storeChanged.isEmpty else { return nil }
        return MergeConflict(object: object, stored: stored, storeChangedSlots: Set(storeChanged), newVersion: sequence)
    }
}
