import StrataStore

extension StoreWriter {
    /// Permanent IDs in this store for `objects` (new objects of entities it holds), in their
    /// order (Core Data's `NSIncrementalStore.obtainPermanentIDs(for:)`). Costs no I/O: keys are
    /// reserved in memory, one range per stored entity.
    ///
    /// - Throws: ``CoreDataError`` when the model cannot be stored.
    func obtainPermanentIDs(for objects: [ManagedObject]) throws -> [ManagedObjectID] {
        let mapping = try coordinator.mapping.get()
        var positions: [Int: [Int]] = [:]
        // Objects of one entity usually come in a row: look their layout up once.
        var recent: (entity: EntityDescription, storeEntity: Int)?
        for (position, object) in objects.enumerated() {
            if recent?.entity !== object.entity { recent = (object.entity, mapping.layout(of: object.entity)!.storeEntity) }
            positions[recent!.storeEntity, default: []].append(position)
        }
        var ids = [ManagedObjectID?](repeating: nil, count: objects.count)
        for (storeEntity, members) in positions {
            for (position, key) in zip(members, store.rows.allocateKeys(for: storeEntity, count: members.count)) {
                ids[position] = ManagedObjectID(entity: objects[position].entity, storeIdentifier: store.identifier, primaryKey: key)
            }
        }
        return ids.map { $0! }
    }
}
