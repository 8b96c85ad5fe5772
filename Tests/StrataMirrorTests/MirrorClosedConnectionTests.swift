import Foundation
import Logging
import PostgresNIO
import Testing
@testable import StrataMirror

/// Exchanges on a connection whose server went away fail at once instead of leaving a task
/// suspended in postgres-nio (which drops a query written to a closed channel without failing it).
@Suite(
    "Mirror closed connections", .serialized, .timeLimit(.minutes(1)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorClosedConnectionTests {
    @Test(
        "after the server stops, queries and exchanges on its connection fail with connectionLost, without running or hanging"
    )
    func closedConnectionFailsAtOnce() async throws {
        let server = try PrivatePostgres()
        let postgres = try await server.newDatabase()
        let logger = Logger(label: "test")
        let connection = try await PostgresConnection.connect(configuration: postgres, id: 1, logger: logger)
        #expect(try await connection.send("SELECT 1", logger: logger).collect().count == 1)
        try server.stop(mode: "immediate")
        for _ in 0..<100 where !connection.isClosed { try await Task.sleep(for: .milliseconds(50)) }
        #expect(connection.isClosed)

        for _ in 0..<5 {
            let error = await #expect(throws: MirrorError.self) {
                try await connection.send("SELECT 1", logger: logger)
            }
            #expect(isConnectionLost(error))
        }
        let ran = LockedFlag()
        for _ in 0..<5 {
            let error = await #expect(throws: MirrorError.self) {
                try await connection.withDeadline(seconds: 30) {
                    ran.set()
                    return try await connection.send("SELECT 1", logger: logger).collect().count
                }
            }
            #expect(isConnectionLost(error))
        }
        #expect(!ran.isSet)
    }

    private func isConnectionLost(_ error: MirrorError?) -> Bool {
        if case .connectionLost = error { return true }
        return false
    }
}

/// A flag set from a sendable closure.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
