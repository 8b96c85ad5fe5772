import Foundation
import Logging
import PostgresNIO
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// The asynchronous export holds the store's save lock only for its local steps: local saves
/// go on while it waits for PostgreSQL.
@Suite(
    "Mirror export and the save lock", .serialized, .timeLimit(.minutes(1)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorExportLockTests {
    @Test(
        "while an export waits for the log's head lock, local saves commit, and everything is exported once it is free")
    func savesGoOnWhileExportWaits() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        a.startTailing()
        try a.insert("first")
        #expect(try await waitForLog(1, postgres))

        // Another client holds the head lock: a's next export waits for it in PostgreSQL.
        let logger = Logger(label: "test")
        let holder = try await PostgresConnection.connect(configuration: postgres, id: 1, logger: logger)
        try await holder.query("BEGIN", logger: logger)
        try await holder.query("SELECT pos FROM strata_head FOR UPDATE", logger: logger)
        try a.insert("second")
        var waiting = false
        for _ in 0..<100 where !waiting {
            waiting = try await queryInt("SELECT count(*) FROM pg_locks WHERE NOT granted", on: postgres) > 0
            if !waiting { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(waiting)

        // A save now does not wait for the export (which would fail at the server's lock_timeout first).
        try a.insert("third")
        #expect(try a.items() == ["first": 0, "second": 0, "third": 0])
        #expect(try await queryInt("SELECT count(*) FROM pg_locks WHERE NOT granted", on: postgres) > 0)
        #expect(try a.container.hasPendingExports())

        try await holder.query("COMMIT", logger: logger)
        try await holder.close()
        #expect(try await waitForLog(3, postgres))
        var pending = true
        for _ in 0..<400 where pending {
            pending = try a.container.hasPendingExports()
            if pending { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(!pending)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        b.startTailing()
        #expect(try await b.waitUntil { $0 == ["first": 0, "second": 0, "third": 0] })
        try await a.close()
        try await b.close()
    }
}
