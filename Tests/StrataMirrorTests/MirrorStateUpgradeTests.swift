import Foundation
import PostgresNIO
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// Stores mirrored by builds whose `StrataMirrorState` held the cursor only (no leased keys).
@Suite(
    "Mirror state upgrade", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorStateUpgradeTests {
    /// The model an older build mirrored: the tests' model plus `StrataMirrorState(position)`.
    private func olderModel() -> ManagedObjectModel {
        let model = mirrorTestModel()
        let position = AttributeDescription(name: "position", type: .integer64)
        position.defaultValue = Int64(0)
        model.entities.append(EntityDescription(name: "StrataMirrorState", properties: [position]))
        return model
    }

    @Test(
        "a store whose mirror state predates leased keys is upgraded explicitly (with automatic migration off too), keeps its cursor and data, leases none, and mirrors on",
        arguments: [MirrorConfiguration.Mode.synchronous, .asynchronous], [true, false])
    func stateWithoutKeysOpens(mode: MirrorConfiguration.Mode, migratesAutomatically: Bool) async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: mode)
        a.startTailing()
        try a.insert("from-a", count: 1)
        #expect(try await waitForLog(1, postgres))

        // b's store as an older build left it: cursor at 1 (it holds a's save), one item.
        let url = folder.url.appendingPathComponent("b.strata")
        let older = PersistentContainer(name: "b", managedObjectModel: olderModel())
        older.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        let failure = LockedError()
        older.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        let context = older.newBackgroundContext()
        let stateKey = try context.performAndWait {
            let state = EntityDescription.insertNewObject(forEntityName: "StrataMirrorState", into: context)
            state.setValue(Int64(1), forKey: "position")
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("from-a", forKey: "name")
            item.setValue(Int64(1), forKey: "count")
            try context.save()
            return state.objectID.uriRepresentation().lastPathComponent
        }
        #expect(stateKey == "p\(MirrorState.key)")
        for store in older.persistentStoreCoordinator.persistentStores {
            try older.persistentStoreCoordinator.remove(store)
        }

        #expect(
            try ManagedObjectModel.storeModel(at: url)?.entitiesByName["StrataMirrorState"]?.propertiesByName["keys"]
                == nil)
        let b = try MirrorInstance(
            "b", folder: folder, postgres: postgres, mode: mode, migratesAutomatically: migratesAutomatically)
        #expect(
            try ManagedObjectModel.storeModel(at: url)?.entitiesByName["StrataMirrorState"]?.propertiesByName["keys"]
                != nil)
        #expect(try b.mirror.cursor() == 1)
        #expect(try b.mirror.location.keys(in: b.mirror.engine).isEmpty)
        #expect(try b.items() == ["from-a": 1])
        b.startTailing()
        try b.insert("from-b", count: 2)
        #expect(try await a.waitUntil { $0 == ["from-a": 1, "from-b": 2] })
        try a.insert("again", count: 3)
        #expect(try await b.waitUntil { $0 == ["from-a": 1, "from-b": 2, "again": 3] })
        #expect(try b.itemCount() == 3)
        try await a.close()
        try await b.close()

        // Reopened, it still holds everything.
        let reopened = try MirrorInstance(
            "b", folder: folder, postgres: postgres, mode: mode, migratesAutomatically: migratesAutomatically)
        #expect(try reopened.items() == ["from-a": 1, "from-b": 2, "again": 3])
        #expect(try reopened.mirror.cursor() == 3)
        try await reopened.close()
    }
}

/// Where a store's mirror state lives, without PostgreSQL.
@Suite struct MirrorStateLocationTests {
    @Test func aModelWhoseMirrorStateLacksItsAttributesIsRefused() throws {
        let model = mirrorTestModel()
        let position = AttributeDescription(name: "position", type: .integer64)
        model.entities.append(EntityDescription(name: MirrorState.entityName, properties: [position]))
        MirrorState.addEntity(to: model)
        let folder = TemporaryDirectory()
        let container = PersistentContainer(name: "state", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.store())]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        let error = #expect(throws: CoreDataError.self) {
            try MirrorState.Location(coordinator: container.persistentStoreCoordinator)
        }
        #expect(error?.code == .coreData)
        #expect(error?.message.contains("keys") == true, "\(error?.message ?? "")")
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
    }
}
