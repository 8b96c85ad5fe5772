import Foundation
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// The mirror while its PostgreSQL server is down.
@Suite(
    "Mirror faults", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorFaultTests {
    @Test(
        "with PostgreSQL stopped a save fails with persistentStoreSave, keeps its changes and succeeds after a restart")
    func saveFailsWhileServerIsDown() async throws {
        let server = try PrivatePostgres()
        let postgres = try await server.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres)
        b.startTailing()
        try a.insert("before", count: 1)

        try server.stop(mode: "immediate")
        let context = a.container.newBackgroundContext()
        let error = context.performAndWait {
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("during", forKey: "name")
            return #expect(throws: CoreDataError.self) { try context.save() }
        }
        #expect(error?.code == .persistentStoreSave)
        #expect(context.performAndWait { context.hasChanges })
        #expect(try a.items() == ["before": 1])

        try server.start()
        try context.performAndWait { try context.save() }
        #expect(try a.items() == ["before": 1, "during": 0])
        #expect(try await b.waitUntil { $0 == ["before": 1, "during": 0] })
        try await a.close()
        try await b.close()
    }
}
