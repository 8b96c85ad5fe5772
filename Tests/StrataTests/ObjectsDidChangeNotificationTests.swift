import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// What the objects-did-change notification reports of objects inserted in an earlier event.
@Suite struct ObjectsDidChangeNotificationTests {
    @Test func aLaterChangeOfAnInsertedObjectIsAnUpdateOfItsEvent() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let changed = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: context)
        try context.performAndWait {
            let ann = Employee(context: context)
            ann.name = "Ann"
            context.processPendingChanges()
            ann.salary = 10
            context.processPendingChanges()
            #expect(context.updatedObjects.isEmpty, "an inserted object is saved as an insert, not an update")
            #expect(context.insertedObjects == [ann])
            try context.save()
        }
        let posts = changed.posts.current
        try #require(posts.count >= 2)
        #expect(posts[0]["inserted"]?.count == 1)
        #expect(posts[1]["updated"]?.count == 1, "the change of the inserted object is reported")
        #expect(posts[1]["inserted"]?.isEmpty ?? true)
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let saved = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(saved.map(\.salary) == [10], "the insert was saved with its later change")
        }
        try reopened.close()
    }

    /// Deleting most of the objects inserted in an earlier event compacts the context's
    /// inserted set (``ChangedObjects``): the objects left, and those inserted after, are still
    /// told apart by the event they were inserted in, and the save writes exactly them.
    @Test func insertsLeftAfterManyDeletesKeepTheirEventsAndSave() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let changed = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: context)
        var later: Set<ManagedObjectID> = []
        var kept: ManagedObjectID?
        try context.performAndWait {
            let earlier = (0..<100).map { index in
                let employee = Employee(context: context)
                employee.name = "e\(index)"
                return employee
            }
            context.processPendingChanges()
            for employee in earlier.prefix(70) { context.delete(employee) }
            let added = (0..<5).map { index in
                let employee = Employee(context: context)
                employee.name = "x\(index)"
                return employee
            }
            earlier[99].salary = 1
            added[0].salary = 2
            later = Set(added.map(\.objectID))
            kept = earlier[99].objectID
            context.processPendingChanges()
            #expect(context.insertedObjects == Set(earlier.suffix(30) + added))
            try context.save()
        }
        let posts = changed.posts.current
        try #require(posts.count >= 2)
        #expect(posts[0]["inserted"]?.count == 100)
        #expect(posts[1]["inserted"] == later, "only the objects inserted in the second event")
        #expect(
            posts[1]["updated"] == [try #require(kept)],
            "a change of an object inserted earlier, not of one inserted in the event")
        #expect(posts[1]["deleted"]?.count == 70)
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let saved = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(Set(saved.map(\.name)) == Set((70..<100).map { "e\($0)" } + (0..<5).map { "x\($0)" }))
            #expect(saved.first { $0.name == "e99" }?.salary == 1)
            #expect(saved.first { $0.name == "x0" }?.salary == 2)
        }
        try reopened.close()
    }
}
