import Foundation
import Testing
@testable import Strata

/// What the objects-did-change notification reports of objects inserted in an earlier event.
@Suite struct ObjectsDidChangeNotificationTests {
    @Test func aLaterChangeOfAnInsertedObjectIsAnUpdateOfItsEvent() throws {
        let folder = TemporaryFolder()
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
}
