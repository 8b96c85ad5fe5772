import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `mergeChanges(fromContextDidSave:)` and `mergeChanges(fromRemoteContextSave:into:)`: what
/// the receiver's objects become and the notifications it posts.
@Suite struct MergeChangesTests {
    /// Saves, in a new context, a raise for Ann, Bob's deletion and a new employee Cy in Sales;
    /// returns the did-save notification's `userInfo` IDs and Cy's ID.
    static func saveElsewhere(
        _ container: PersistentContainer, _ ids: [String: ManagedObjectID]
    ) throws -> (notification: Notification, cy: ManagedObjectID) {
        let theirs = container.newBackgroundContext()
        let observer = ContextLifecycleTests.Observer(ManagedObjectContext.didSaveObjectsNotification, of: theirs)
        let cy = try theirs.performAndWait {
            (try theirs.existingObject(with: ids["Ann"]!) as! Employee).salary = 2000
            theirs.delete(try theirs.existingObject(with: ids["Bob"]!))
            let cy = Employee(context: theirs)
            cy.name = "Cy"
            cy.department = (try theirs.existingObject(with: ids["Sales"]!) as! Department)
            try theirs.save()
            return cy.objectID
        }
        return (try #require(observer.notifications.current.first), cy)
    }

    @Test func mergeFromContextDidSaveRefreshesDeletesAndFaultsIn() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let changed = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: mine)
        let merged = ContextLifecycleTests.Observer(ManagedObjectContext.didMergeChangesObjectIDsNotification, of: mine)
        let (ann, bob, research) = try mine.performAndWait {
            let ann = try mine.existingObject(with: ids["Ann"]!) as! Employee
            let bob = try mine.existingObject(with: ids["Bob"]!) as! Employee
            let research = try mine.existingObject(with: ids["Research"]!) as! Department
            research.budget = 1
            return (ann, bob, research)
        }
        let (notification, cyID) = try Self.saveElsewhere(container, ids)
        let before = changed.posts.current.count
        try mine.performAndWait {
            mine.mergeChanges(fromContextDidSave: notification)
            #expect(ann.salary == 2000, "the updated object was refreshed")
            #expect(!ann.hasChanges)
            #expect(research.budget == 1, "unsaved changes of the receiver stay")
            #expect(bob.managedObjectContext === mine, "the deleted object stays until the next save, as in Core Data")
            #expect(bob.isDeleted)
            #expect(mine.registeredObject(for: ids["Bob"]!) === bob)
            #expect(mine.deletedObjects.contains(bob), "deleted here, with nothing to write when saved")
            let sales = try mine.existingObject(with: ids["Sales"]!) as! Department
            #expect(sales.employees.map(\.objectID) == [cyID])
            try mine.save()
        }
        let posts = changed.posts.current.dropFirst(before)
        let event = try #require(posts.first)
        #expect(event["refreshed"] == [ids["Ann"]!, ids["Research"]!], "registered objects that were updated")
        #expect(event["deleted"] == [ids["Bob"]!])
        #expect(event["inserted"] == [cyID], "inserted objects are faulted in")
        let mergedIDs = try #require(merged.posts.current.first)
        #expect(mergedIDs["inserted_objectIDs"] == [cyID])
        #expect(mergedIDs["deleted_objectIDs"] == [ids["Bob"]!])
        #expect(mergedIDs["updated_objectIDs"]?.contains(ids["Ann"]!) == true)
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws -> Void in
            #expect((try reader.existingObject(with: ids["Research"]!) as! Department).budget == 1)
            #expect(
                (try reader.existingObject(with: ids["Ann"]!) as! Employee).salary == 2000,
                "the receiver's save kept the merged value")
        }
    }

    @Test func mergeFromRemoteContextSaveTakesIDsOrURIs() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = NestedContextTests.child(of: parent)
        let parentAnn = try parent.performAndWait { try parent.existingObject(with: ids["Ann"]!) as! Employee }
        let (childAnn, childBob) = try child.performAndWait {
            (
                try child.existingObject(with: ids["Ann"]!) as! Employee,
                try child.existingObject(with: ids["Bob"]!) as! Employee
            )
        }
        let (_, cyID) = try Self.saveElsewhere(container, ids)
        let deletedObserver = ContextLifecycleTests.Observer(
            ManagedObjectContext.didChangeObjectsNotification, of: child)
        // URIs under Core Data's object keys, as a remote process would send them.
        ManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [
                "updated": [ids["Ann"]!.uriRepresentation()], "deleted": [ids["Bob"]!.uriRepresentation()],
                "inserted": [cyID.uriRepresentation()],
            ],
            into: [child, parent])
        parent.performAndWait {
            #expect(parentAnn.salary == 2000)
        }
        child.performAndWait {
            #expect(childAnn.salary == 2000, "the child refreshed after its parent")
            #expect(childBob.isDeleted && child.deletedObjects.contains(childBob))
        }
        #expect(deletedObserver.posts.current.contains { $0["deleted"] == [ids["Bob"]!] })

        // Object-ID sets under the `…_objectIDs` keys.
        try parent.performAndWait {
            let research = try parent.existingObject(with: ids["Research"]!) as! Department
            #expect(research.employees.map(\.name) == ["Ann"])
            let other = container.newBackgroundContext()
            try other.performAndWait {
                (try other.existingObject(with: ids["Research"]!) as! Department).budget = 5
                try other.save()
            }
            ManagedObjectContext.mergeChanges(
                fromRemoteContextSave: ["updated_objectIDs": Set([ids["Research"]!])], into: [parent])
            #expect(research.budget == 5)
        }
    }

    @Test func mergeChangesFromTheChangesStreamReportsDeletions() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let changed = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: mine)
        let bob = try mine.performAndWait { try mine.existingObject(with: ids["Bob"]!) }
        mine.performAndWait {
            mine.mergeChanges(from: ContextChange(kind: .didSave, deleted: [ids["Bob"]!]))
        }
        #expect(bob.isDeleted && bob.managedObjectContext === mine)
        #expect(changed.posts.current.contains { $0["deleted"] == [ids["Bob"]!] })
    }

    @Test func childMergesItsParentsSaveIntoTheGrandparent() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try ContextLifecycleTests.seededContainer(in: folder)
        let root = container.newBackgroundContext()
        let middle = NestedContextTests.child(of: root)
        let leaf = NestedContextTests.child(of: middle)
        leaf.automaticallyMergesChangesFromParent = true
        let changed = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: leaf)
        let opsID = try middle.performAndWait {
            let ops = Department(context: middle)
            ops.name = "Ops"
            try middle.save()
            return ops.objectID
        }
        try leaf.performAndWait { () throws -> Void in
            #expect(changed.posts.current.contains { $0["inserted"] == [opsID] }, "the parent's insert is faulted in")
            #expect((try leaf.existingObject(with: opsID) as! Department).name == "Ops")
        }
    }
}
