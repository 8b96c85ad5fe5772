internal import StrataStore

extension ManagedObjectContext {
    /// Builds one transaction per store through its ``StoreWriter``, each under its store's
    /// condition, then commits them, adding each store's sequence to `sequences` once committed.
    /// A store's condition is that the commits after its sequence in `since` changed nothing the
    /// save's checks read (``commitConditions(inserted:updated:deleted:since:coordinator:)``).
    /// Nothing is committed when a transaction cannot be built: the rows of a save's inserted
    /// objects are made as the engine encodes them only when the save writes to one store.
    ///
    /// - Parameter checked: the updated and deleted objects as the checks read them, before the
    ///   merge policy resolved their conflicts.
    /// - Throws: ``SaveConflict`` when a store refuses a commit because its condition failed.
    func commit(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject],
        checked: (updated: [ManagedObject], deleted: [ManagedObject]), since: [String: UInt64],
        into sequences: inout [String: UInt64], coordinator: PersistentStoreCoordinator
    ) throws {
        let conditions = try commitConditions(
            inserted: inserted, updated: checked.updated, deleted: checked.deleted, since: since,
            coordinator: coordinator)
        // One change set per store, in the order the stores first appear (a save has few).
        var changes: [(identifier: String, set: StoreChangeSet)] = []
        func add(_ objects: [ManagedObject], _ append: (inout StoreChangeSet, ManagedObject) -> Void) {
            var index = -1
            for object in objects {
                let identifier = object.objectID.storeIdentifier!
                if index < 0 || changes[index].identifier != identifier {
                    index = changes.firstIndex { $0.identifier == identifier } ?? -1
                    if index < 0 {
                        index = changes.count
                        changes.append(
                            (
                                identifier,
                                StoreChangeSet(
                                    author: transactionAuthor, contextName: name, condition: conditions[identifier],
                                    consumerCursors: HistoryConsumerStaging.cursors[identifier] ?? [:])
                            ))
                    }
                }
                append(&changes[index].set, object)
            }
        }
        add(inserted) { $0.inserted.append($1) }
        add(updated) { $0.updated.append($1) }
        add(deleted) { $0.deleted.append($1) }
        var saves: [(writer: StoreWriter, save: StoreSave)] = []
        for (identifier, change) in changes {
            guard let store = coordinator.store(identifier: identifier) else {
                throw CoreDataError(.persistentStoreSave, "the store \(identifier) was removed")
            }
            let writer = StoreWriter(store: store, coordinator: coordinator)
            saves.append((writer, try writer.save(for: change, makingRowsAsEncoded: changes.count == 1)))
        }
        for (writer, save) in saves where !save.isEmpty {
            sequences[writer.store.identifier] = try writer.commit(save)
        }
    }

    /// What each store's commit of the save requires of the commits after `since` (by store):
    /// the rows of the updated and deleted objects (checked for optimistic-locking conflicts),
    /// the join entities of the relationships whose join rows the save reads, and the entities
    /// of the inserted and updated objects with uniqueness constraints (checked against them).
    private func commitConditions(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], since: [String: UInt64],
        coordinator: PersistentStoreCoordinator
    ) throws -> [String: CommitCondition] {
        var conditions: [String: CommitCondition] = [:]
        func condition(_ object: ManagedObject, _ change: (inout CommitCondition) -> Void) {
            guard let identifier = object.objectID.storeIdentifier, let sequence = since[identifier] else { return }
            change(&conditions[identifier, default: CommitCondition(since: sequence)])
        }
        // Objects of one entity usually come in a row: look their layout and constraints up once.
        var recent: (entity: EntityDescription, layout: EntityLayout, isConstrained: Bool)?
        for object in inserted + updated + deleted {
            if recent?.entity !== object.entity {
                recent = (
                    object.entity, try coordinator.layout(object.entity), !object.runtime.uniquenessConstraints.isEmpty
                )
            }
            let layout = recent!.layout
            if !object.isInserted && !object.objectID.isTemporaryID {
                condition(object) { $0.rows[layout.storeEntity, default: []].insert(object.objectID.primaryKey) }
            }
            if !object.isDeleted && recent!.isConstrained {
                condition(object) { $0.entities.insert(layout.storeEntity) }
            }
            for (name, join) in layout.joins {
                let read =
                    object.isDeleted
                    || (!object.isInserted && join.writesPairs
                        && object.changedSlots.contains(object.runtime.slots[name]!))
                if read { condition(object) { $0.entities.insert(join.storeEntity) } }
            }
        }
        return conditions
    }
}
