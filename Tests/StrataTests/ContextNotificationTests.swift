import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Notifications under Core Data's names and keys, and events ended as Core Data ends them.
@Suite struct ContextNotificationTests {
    /// Records the notifications of one name posted by one context.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var infos: [[AnyHashable: Any]] = []
        private var token: NSObjectProtocol?

        init(_ name: Notification.Name, _ context: ManagedObjectContext) {
            token = NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) {
                [unowned self] note in
                lock.withLock { infos.append(note.userInfo ?? [:]) }
            }
        }

        deinit { if let token { NotificationCenter.default.removeObserver(token) } }

        var posts: [[AnyHashable: Any]] { lock.withLock { infos } }
    }

    @Test func namesAndKeysAreCoreDatas() {
        #expect(Notification.Name.ManagedObjectContextDidSave.rawValue == "NSManagingContextDidSaveChangesNotification")
        #expect(
            Notification.Name.ManagedObjectContextObjectsDidChange == ManagedObjectContext.didChangeObjectsNotification)
        #expect(Notification.Name.ManagedObjectContextWillSave == ManagedObjectContext.willSaveObjectsNotification)
        #expect(
            Notification.Name.ManagedObjectContextDidSaveObjectIDs == ManagedObjectContext.didSaveObjectIDsNotification)
        #expect(
            Notification.Name.ManagedObjectContextDidMergeChangesObjectIDs
                == ManagedObjectContext.didMergeChangesObjectIDsNotification)
        #expect(
            [
                InsertedObjectsKey, UpdatedObjectsKey, DeletedObjectsKey, RefreshedObjectsKey, InvalidatedObjectsKey,
                InvalidatedAllObjectsKey,
            ]
                == ["inserted", "updated", "deleted", "refreshed", "invalidated", "invalidatedAll"])
        #expect(
            [
                InsertedObjectIDsKey, UpdatedObjectIDsKey, DeletedObjectIDsKey, RefreshedObjectIDsKey,
                InvalidatedObjectIDsKey,
            ]
                == [
                    "inserted_objectIDs", "updated_objectIDs", "deleted_objectIDs", "refreshed_objectIDs",
                    "invalidated_objectIDs",
                ])
    }

    @Test func saveAndChangeNotificationsLeaveOutEmptySets() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let changed = Recorder(.ManagedObjectContextObjectsDidChange, context)
        let saved = Recorder(.ManagedObjectContextDidSave, context)
        let savedIDs = Recorder(ManagedObjectContext.didSaveObjectIDsNotification, context)
        let ada = try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            try context.save()
            return ada.objectID
        }
        let change = try #require(changed.posts.first)
        #expect((change[InsertedObjectsKey] as? Set<ManagedObject>)?.map(\.objectID) == [ada])
        #expect(change[UpdatedObjectsKey] == nil)
        #expect(change[DeletedObjectsKey] == nil)
        let save = try #require(saved.posts.first)
        #expect((save[InsertedObjectsKey] as? Set<ManagedObject>)?.map(\.objectID) == [ada])
        #expect(save[UpdatedObjectsKey] == nil)
        #expect(save[DeletedObjectsKey] == nil)
        let ids = try #require(savedIDs.posts.first)
        #expect(ids[InsertedObjectIDsKey] as? Set<ManagedObjectID> == [ada])
        #expect(ids[DeletedObjectIDsKey] == nil)
    }

    @Test func resetPostsInvalidatedAll() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let id = try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            try context.save()
            return ada.objectID
        }
        let changed = Recorder(.ManagedObjectContextObjectsDidChange, context)
        let held = context.performAndWait { () -> ManagedObject in
            let ada = context.object(with: id)
            context.reset()
            return ada
        }
        #expect(held.managedObjectContext == nil)
        let post = try #require(changed.posts.first)
        #expect(post[InvalidatedAllObjectsKey] as? [ManagedObjectID] == [id])
        #expect(changed.posts.count == 1)
    }

    /// The view context's `performAndWait` from the main thread runs at once and ends the event
    /// when the outermost block returns.
    @Test(.waitsOnQueues) func performAndWaitOnTheQueueEndsTheEventOfTheOutermostBlock() async throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let view = container.viewContext
        let changed = Recorder(.ManagedObjectContextObjectsDidChange, view)
        let countsInside = await MainActor.run { () -> [Int] in
            var counts: [Int] = []
            view.performAndWait {
                view.performAndWait {
                    let ada = Employee(context: view)
                    ada.name = "Ada"
                }
                counts.append(changed.posts.count)
            }
            counts.append(changed.posts.count)
            return counts
        }
        #expect(countsInside == [0, 1], "one event, ended by the outermost block")
        #expect((changed.posts.first?[InsertedObjectsKey] as? Set<ManagedObject>)?.count == 1)
    }

    @Test(.waitsOnQueues) func performWithASchedule() async throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let background = container.newBackgroundContext()
        let onQueue = await background.perform(schedule: .enqueued) { background.isOnQueue }
        #expect(onQueue)
        let view = container.viewContext
        let changed = Recorder(.ManagedObjectContextObjectsDidChange, view)
        let immediate = await Task { @MainActor in
            await view.perform(schedule: .immediate) { () -> Int in
                let ada = Employee(context: view)
                ada.name = "Ada"
                return changed.posts.count
            }
        }.value
        #expect(immediate == 0)
        #expect(changed.posts.count == 1, "the block ended the event")
    }
}
