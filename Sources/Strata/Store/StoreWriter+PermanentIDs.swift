internal import StrataStore

extension StoreWriter {
    /// Permanent IDs in this store for `objects` (new objects of entities it holds), in their
    /// order (Core Data's `NSIncrementalStore.obtainPermanentIDs(for:)`). Costs no I/O: keys are
    /// reserved in memory, one range per run of objects of one entity.
    ///
    /// - Throws: ``CoreDataError`` when the model cannot be stored or has no entity of an
    ///   object's entity's name.
    func obtainPermanentIDs(for objects: [ManagedObject]) throws -> [ManagedObjectID] {
        let mapping = try coordinator.mapping.get()
        let identifier = store.identifier
        var ids: [ManagedObjectID] = []
        ids.reserveCapacity(objects.count)
        // Objects of one entity usually come in a row: one range of keys for each run.
        var start = 0
        while start < objects.count {
            let entity = objects[start].entity
            var end = start + 1
            while end < objects.count, objects[end].entity === entity { end += 1 }
            let keys = store.rows.allocateKeys(
                for: try mapping.requiredLayout(of: entity).storeEntity, count: end - start)
            for key in keys {
                ids.append(ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: key))
            }
            start = end
        }
        return ids
    }
}
