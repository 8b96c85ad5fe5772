import Foundation

/// The `userInfo` key of the inserted objects, `Set<ManagedObject>` (Core Data's `NSInsertedObjectsKey`).
public let InsertedObjectsKey = ManagedObjectContext.NotificationKey.insertedObjects.rawValue
/// The `userInfo` key of the updated objects, `Set<ManagedObject>` (Core Data's `NSUpdatedObjectsKey`).
public let UpdatedObjectsKey = ManagedObjectContext.NotificationKey.updatedObjects.rawValue
/// The `userInfo` key of the deleted objects, `Set<ManagedObject>` (Core Data's `NSDeletedObjectsKey`).
public let DeletedObjectsKey = ManagedObjectContext.NotificationKey.deletedObjects.rawValue
/// The `userInfo` key of the refreshed objects, `Set<ManagedObject>` (Core Data's `NSRefreshedObjectsKey`).
public let RefreshedObjectsKey = ManagedObjectContext.NotificationKey.refreshedObjects.rawValue
/// The `userInfo` key of the invalidated objects, `Set<ManagedObject>` (Core Data's `NSInvalidatedObjectsKey`).
public let InvalidatedObjectsKey = ManagedObjectContext.NotificationKey.invalidatedObjects.rawValue
/// The `userInfo` key telling that every object of the context was invalidated (by `reset()`):
/// the IDs of the objects it held, `[ManagedObjectID]` (Core Data's `NSInvalidatedAllObjectsKey`).
public let InvalidatedAllObjectsKey = ManagedObjectContext.NotificationKey.invalidatedAllObjects.rawValue
/// The `userInfo` key of the inserted object IDs, `Set<ManagedObjectID>` (Core Data's `NSInsertedObjectIDsKey`).
public let InsertedObjectIDsKey = ManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue
/// The `userInfo` key of the updated object IDs, `Set<ManagedObjectID>` (Core Data's `NSUpdatedObjectIDsKey`).
public let UpdatedObjectIDsKey = ManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue
/// The `userInfo` key of the deleted object IDs, `Set<ManagedObjectID>` (Core Data's `NSDeletedObjectIDsKey`).
public let DeletedObjectIDsKey = ManagedObjectContext.NotificationKey.deletedObjectIDs.rawValue
/// The `userInfo` key of the refreshed object IDs, `Set<ManagedObjectID>` (Core Data's `NSRefreshedObjectIDsKey`).
public let RefreshedObjectIDsKey = ManagedObjectContext.NotificationKey.refreshedObjectIDs.rawValue
/// The `userInfo` key of the invalidated object IDs, `Set<ManagedObjectID>` (Core Data's `NSInvalidatedObjectIDsKey`).
public let InvalidatedObjectIDsKey = ManagedObjectContext.NotificationKey.invalidatedObjectIDs.rawValue
/// The `userInfo` key of a context's query generation token (Core Data's
/// `NSManagedObjectContextQueryGenerationKey`).
public let ManagedObjectContextQueryGenerationKey = ManagedObjectContext.NotificationKey.queryGeneration.rawValue

extension ManagedObjectContext {
    /// Posted after a save with the IDs of the objects saved, under ``InsertedObjectIDsKey``,
    /// ``UpdatedObjectIDsKey`` and ``DeletedObjectIDsKey`` (Core Data's
    /// `didSaveObjectIDsNotification`).
    public static let didSaveObjectIDsNotification = Notification.Name(
        "NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted when changes saved elsewhere are merged into a context, with the IDs of the objects
    /// concerned (Core Data's `didMergeChangesObjectIDsNotification`).
    public static let didMergeChangesObjectIDsNotification = Notification.Name(
        "NSManagedObjectContextDidMergeChangesObjectIDsNotification")

    /// A notification's `userInfo`: each non-empty set under its key, as Core Data leaves empty
    /// ones out.
    static func notificationInfo(
        objects: KeyValuePairs<NotificationKey, Set<ManagedObject>> = [:],
        objectIDs: KeyValuePairs<NotificationKey, Set<ManagedObjectID>> = [:]
    ) -> [AnyHashable: Any] {
        var info = [AnyHashable: Any](minimumCapacity: objects.count + objectIDs.count)
        for (key, set) in objects where !set.isEmpty { info[key.rawValue] = set }
        for (key, set) in objectIDs where !set.isEmpty { info[key.rawValue] = set }
        return info
    }

    /// Posts the objects-did-change notification `reset()` posts: every object the context held,
    /// by ID, under ``InvalidatedAllObjectsKey``.
    func postInvalidatedAll(_ objectIDs: [ManagedObjectID]) {
        NotificationCenter.default.post(
            name: Self.didChangeObjectsNotification, object: self,
            userInfo: [
                NotificationKey.invalidatedAllObjects.rawValue: objectIDs
            ])
        yieldChange(ContextChange(kind: .objectsDidChange, invalidated: Set(objectIDs)))
    }
}

extension Notification.Name {
    /// Core Data's `Notification.Name.NSManagedObjectContextObjectsDidChange`:
    /// ``ManagedObjectContext/didChangeObjectsNotification``.
    public static let ManagedObjectContextObjectsDidChange = ManagedObjectContext.didChangeObjectsNotification
    /// Core Data's `Notification.Name.NSManagedObjectContextWillSave`:
    /// ``ManagedObjectContext/willSaveObjectsNotification``.
    public static let ManagedObjectContextWillSave = ManagedObjectContext.willSaveObjectsNotification
    /// Core Data's `Notification.Name.NSManagedObjectContextDidSave`:
    /// ``ManagedObjectContext/didSaveObjectsNotification``.
    public static let ManagedObjectContextDidSave = ManagedObjectContext.didSaveObjectsNotification
    /// Core Data's `Notification.Name.NSManagedObjectContextDidSaveObjectIDs`:
    /// ``ManagedObjectContext/didSaveObjectIDsNotification``.
    public static let ManagedObjectContextDidSaveObjectIDs = ManagedObjectContext.didSaveObjectIDsNotification
    /// Core Data's `Notification.Name.NSManagedObjectContextDidMergeChangesObjectIDs`:
    /// ``ManagedObjectContext/didMergeChangesObjectIDsNotification``.
    public static let ManagedObjectContextDidMergeChangesObjectIDs = ManagedObjectContext
        .didMergeChangesObjectIDsNotification
}
