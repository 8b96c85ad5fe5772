import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `PersistentStore.isReadOnly` set by the application, as Core Data's settable property: saves,
/// batch requests and replays into the store fail and change nothing while it is set, the
/// context keeps its changes, and they go through once it is cleared.
@Suite struct PersistentStoreReadOnlyTests {
    typealias History = PersistentHistoryTests

    @Test func aStoreSetReadOnlyRefusesSavesUntilCleared() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        try History.insert(["Ada"], in: container)
        let store = container.persistentStoreCoordinator.persistentStores[0]
        #expect(!store.isReadOnly)
        store.isReadOnly = true
        #expect(store.isReadOnly)

        let context = container.newBackgroundContext()
        context.performAndWait {
            let employee = Employee(context: context)
            employee.name = "Grace"
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .persistentStoreSave)
            #expect(context.hasChanges && context.insertedObjects.count == 1, "the context keeps its changes")
        }
        let batch = BatchInsertRequest(entityName: "Employee", objects: [["name": "Linus", "salary": 1]])
        let batchError = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(batch, in: container)
        }
        #expect(batchError?.code == .persistentStoreOperation)
        #expect(
            try PersistentHistoryTrackingSwitchTests.employeeNames(in: container) == ["Ada"],
            "reads still work; nothing was written")

        store.isReadOnly = false
        #expect(!store.isReadOnly)
        try context.performAndWait { try context.save() }
        try container.close()

        container = try History.container(at: folder.store())
        #expect(try PersistentHistoryTrackingSwitchTests.employeeNames(in: container) == ["Ada", "Grace"])
        try container.close()
    }

    @Test func aReplayIntoAStoreSetReadOnlyAppliesNothing() throws {
        let folder = TemporaryDirectory()
        let source = try History.container(at: folder.store("Source"))
        try History.insert(["Ada", "Grace"], in: source)
        let destination = try History.container(at: folder.store("Destination"))
        let coordinator = destination.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        store.isReadOnly = true
        let engine = try #require(source.persistentStoreCoordinator.persistentStores[0].engineStore)
        let error = #expect(throws: CoreDataError.self) { try coordinator.replayHistory(from: engine, into: store) }
        #expect(error?.code == .persistentStoreOperation)
        #expect(try PersistentHistoryTrackingSwitchTests.employeeNames(in: destination).isEmpty)

        store.isReadOnly = false
        #expect(try coordinator.replayHistory(from: engine, into: store) == 1)
        #expect(try PersistentHistoryTrackingSwitchTests.employeeNames(in: destination) == ["Ada", "Grace"])
        try source.close()
        try destination.close()
    }

    @Test func aStoreAddedReadOnlyStaysReadOnly() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        try History.insert(["Ada"], in: container)
        try container.close()

        container = try History.container(at: folder.store(), options: [ReadOnlyPersistentStoreOption: true])
        let store = container.persistentStoreCoordinator.persistentStores[0]
        #expect(store.isReadOnly)
        store.isReadOnly = false
        #expect(store.isReadOnly, "its engine store was opened without the writer's lock")
        let error = #expect(throws: CoreDataError.self) { try History.insert(["Grace"], in: container) }
        #expect(error?.code == .persistentStoreSave)
        try container.close()
    }
}
