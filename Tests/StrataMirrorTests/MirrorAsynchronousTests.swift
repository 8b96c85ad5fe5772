import Foundation
import PostgresNIO
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// Asynchronous mode: saves commit locally and the tail exports them.
@Suite(
    "Mirror asynchronous mode", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorAsynchronousTests {
    @Test("saves made while PostgreSQL is down commit locally and are exported once it is back")
    func savesQueueWhileServerIsDown() async throws {
        let server = try PrivatePostgres()
        let postgres = try await server.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        a.startTailing()
        b.startTailing()
        try a.insert("before", count: 1)  // leases a's first keys
        #expect(try await b.waitUntil { $0 == ["before": 1] })

        try server.stop(mode: "immediate")
        for index in 0..<3 { try a.insert("offline\(index)", count: Int64(index)) }
        try a.setCount(5, of: "before")
        #expect(try a.items() == ["before": 5, "offline0": 0, "offline1": 1, "offline2": 2])

        try server.start()
        #expect(try await b.waitUntil { $0 == ["before": 5, "offline0": 0, "offline1": 1, "offline2": 2] })
        #expect(try await queryInt("SELECT count(*) FROM strata_txn", on: postgres) == 5)
        try await a.close()
        try await b.close()
        // Reopened, nothing is exported again.
        let reopened = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        reopened.startTailing()
        try reopened.insert("after")
        #expect(try await waitForLog(6, postgres))
        try await reopened.close()
    }

    @Test(
        "two instances changing the same objects concurrently converge, the later log position winning column by column"
    )
    func concurrentChangesConverge() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        a.startTailing()
        b.startTailing()
        try a.insert("shared", count: 1)
        #expect(try await b.waitUntil { $0 == ["shared": 1] })
        try await a.close()
        try await b.close()

        // Neither tails: both change the object and insert, unaware of each other.
        let a2 = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        let b2 = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        try a2.setCount(10, of: "shared")
        try b2.setCount(20, of: "shared")
        var aKeys: Set<String> = [], bKeys: Set<String> = []  // "p<primary key>"
        for index in 0..<20 {
            aKeys.insert(try a2.insert("a\(index)").uriRepresentation().lastPathComponent)
            bKeys.insert(try b2.insert("b\(index)").uriRepresentation().lastPathComponent)
        }
        #expect(aKeys.isDisjoint(with: bKeys))

        // a exports first, then b: b's change to the shared object comes later in the log.
        let first = try await a2.mirror.connect()
        #expect(try await a2.mirror.step(on: first))
        try await first.close()
        a2.startTailing()
        b2.startTailing()
        let expected = Dictionary(
            uniqueKeysWithValues: (0..<20).flatMap { [("a\($0)", Int64(0)), ("b\($0)", Int64(0))] } + [("shared", 20)])
        #expect(try await a2.waitUntil { $0 == expected })
        #expect(try await b2.waitUntil { $0 == expected })
        #expect(try a2.itemCount() == 41 && b2.itemCount() == 41)
        #expect(try await queryInt("SELECT count(*) FROM strata_txn", on: postgres) == 43)
        try await a2.close()
        try await b2.close()
    }

    @Test(
        "an instance that crashed after PostgreSQL committed its export, before recording it, resumes without duplicates"
    )
    func crashMidExportResumesExactlyOnce() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        for index in 0..<3 { try a.insert("item\(index)", count: Int64(index)) }
        // The store as a SIGKILL after PostgreSQL's commit would leave it: the saves not recorded as exported.
        let image = folder.url.appendingPathComponent("crash-image")
        try FileManager.default.copyItem(at: a.url, to: image)
        let connection = try await a.mirror.connect()
        #expect(try await a.mirror.step(on: connection))
        try await connection.close()
        #expect(try await queryInt("SELECT count(*) FROM strata_txn", on: postgres) == 3)
        try await a.close()
        try FileManager.default.removeItem(at: a.url)
        try FileManager.default.moveItem(at: image, to: a.url)

        let restarted = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        #expect(try restarted.mirror.cursor() == 0)
        restarted.startTailing()
        try restarted.insert("item3", count: 3)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        b.startTailing()
        #expect(try await b.waitUntil { $0 == ["item0": 0, "item1": 1, "item2": 2, "item3": 3] })
        #expect(try await restarted.waitUntil { _ in (try? restarted.mirror.cursor()) == 4 })
        #expect(try b.itemCount() == 4 && restarted.itemCount() == 4)
        #expect(try await queryInt("SELECT count(*) FROM strata_txn", on: postgres) == 4)
        try await restarted.close()
        try await b.close()
    }
}
