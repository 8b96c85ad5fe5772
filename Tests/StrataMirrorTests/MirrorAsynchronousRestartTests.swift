import Foundation
import PostgresNIO
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// An asynchronous instance stopped with saves not yet exported, then restarted from its cursor.
@Suite(
    "Mirror asynchronous restart", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorAsynchronousRestartTests {
    @Test(
        "a restarted asynchronous instance exports the saves it left pending, then its later saves, and another instance that kept tailing receives them all"
    )
    func restartedInstanceSavesReachTheOthers() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        a.startTailing()
        b.startTailing()
        try a.insert("a-exported", count: 1)
        try b.insert("b-before", count: 2)
        // Either save may reach the log first: a's cursor is 2 once a holds b's and exported its own.
        #expect(
            try await a.waitUntil {
                $0 == ["a-exported": 1, "b-before": 2] && (try? a.container.hasPendingExports()) == false
            })
        #expect(try await b.waitUntil { $0 == ["a-exported": 1, "b-before": 2] })
        let cursor = try a.mirror.cursor()
        #expect(cursor == 2)

        // a stops tailing, saves (committed locally, not exported) and closes: as a kill leaves it.
        try await a.close()
        let stopped = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        for index in 0..<3 { try stopped.insert("a-pending\(index)", count: Int64(index)) }
        #expect(try stopped.container.hasPendingExports())
        try await stopped.close()
        try b.insert("b-meanwhile", count: 3)

        // Restarted from its cursor, a exports what was pending, then what it saves after.
        let restarted = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        #expect(try restarted.mirror.cursor() == cursor)
        restarted.startTailing()
        for index in 0..<5 { try restarted.insert("a-after\(index)", count: Int64(10 + index)) }
        var expected: [String: Int64] = ["a-exported": 1, "b-before": 2, "b-meanwhile": 3]
        for index in 0..<3 { expected["a-pending\(index)"] = Int64(index) }
        for index in 0..<5 { expected["a-after\(index)"] = Int64(10 + index) }
        #expect(try await b.waitUntil { $0 == expected })
        #expect(try await restarted.waitUntil { $0 == expected })
        #expect(try await waitForLog(11, postgres))
        #expect(try await restarted.waitUntil { _ in (try? restarted.container.hasPendingExports()) == false })
        #expect(try b.itemCount() == 11 && restarted.itemCount() == 11)
        try await restarted.close()
        try await b.close()
    }
}
