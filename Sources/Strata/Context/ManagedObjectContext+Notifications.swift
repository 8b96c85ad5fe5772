import Foundation

extension ManagedObjectContext {
    /// Posted by `processPendingChanges()` when objects were inserted, updated, deleted,
    /// refreshed or invalidated (Core Data's `NSManagedObjectContextObjectsDidChange`).
    public static let didChangeObjectsNotification = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// Posted when a save begins.
    public static let willSaveObjectsNotification = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted after a save, with the saved objects and their IDs.
    public static let didSaveObjectsNotification = Notification.Name("NSManagingContextDidSaveChangesNotification")

    /// The keys of the notifications' `userInfo` (Core Data's `NSInsertedObjectsKey`, …).
    public enum NotificationKey: String, Sendable {
        /// `Set<ManagedObject>` inserted.
        case insertedObjects = "inserted"
        /// `Set<ManagedObject>` updated.
        case updatedObjects = "updated"
        /// `Set<ManagedObject>` deleted.
        case deletedObjects = "deleted"
        /// `Set<ManagedObject>` refreshed.
        case refreshedObjects = "refreshed"
        /// `Set<ManagedObject>` invalidated.
        case invalidatedObjects = "invalidated"
        /// `Set<ManagedObjectID>` inserted (did-save).
        case insertedObjectIDs = "inserted_objectIDs"
        /// `Set<ManagedObjectID>` updated (did-save).
        case updatedObjectIDs = "updated_objectIDs"
        /// `Set<ManagedObjectID>` deleted (did-save).
        case deletedObjectIDs = "deleted_objectIDs"
        /// `[ManagedObjectID]` of every object the context held, when ``ManagedObjectContext/reset()``
        /// invalidated them all.
        case invalidatedAllObjects = "invalidatedAll"
        /// `Set<ManagedObjectID>` refreshed.
        case refreshedObjectIDs = "refreshed_objectIDs"
        /// `Set<ManagedObjectID>` invalidated.
        case invalidatedObjectIDs = "invalidated_objectIDs"
        /// The query generation token of the context.
        case queryGeneration = "managedObjectContextQueryGeneration"
        /// The context that posted the notification.
        case sourceContext = "managedObjectContext"
        /// In a did-save notification of a save that wrote to a store keeping persistent
        /// history: the ``PersistentHistoryToken`` after the save's transaction.
        case newChangeToken = "newChangeToken"
    }

    /// The context's change events as an asynchronous sequence: objects-did-change, will-save
    /// and did-save, each with the IDs concerned. Each call returns a new stream.
    public var changes: AsyncStream<ContextChange> {
        let (stream, continuation) = AsyncStream<ContextChange>.makeStream(bufferingPolicy: .unbounded)
        let token = UUID()
        performAndWait { changeObservers[token] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let context = self else { return }
            context.perform { context.changeObservers[token] = nil }
        }
        return stream
    }

    /// Sends `change` to every ``changes`` stream; it is made only when there is one.
    func yieldChange(_ change: @autoclosure () -> ContextChange) {
        guard !changeObservers.isEmpty else { return }
        let change = change()
        for continuation in changeObservers.values { continuation.yield(change) }
    }
}

/// One change event of a context, as its ``ManagedObjectContext/changes`` stream delivers it. `Sendable`.
public struct ContextChange: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// Objects changed (the objects-did-change notification).
        case objectsDidChange
        /// A save began.
        case willSave
        /// A save finished.
        case didSave
    }

    /// What happened.
    public var kind: Kind
    /// Objects inserted.
    public var inserted: Set<ManagedObjectID> = []
    /// Objects updated.
    public var updated: Set<ManagedObjectID> = []
    /// Objects deleted.
    public var deleted: Set<ManagedObjectID> = []
    /// Objects refreshed.
    public var refreshed: Set<ManagedObjectID> = []
    /// Objects invalidated.
    public var invalidated: Set<ManagedObjectID> = []
}
