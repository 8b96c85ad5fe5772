import Dispatch
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Testing
@testable import StrataMirror

/// A query sent in the instant its connection's channel closes: postgres-nio drops a query
/// written to a closed channel without failing it, so `send` checks and writes on the channel's
/// event loop, where nothing closes the channel in between. The test queues a close and then a
/// query behind a stopped event loop: the check must see the close that ran before the write
/// (a check made before the write was queued saw the channel open).
@Suite(
    "Mirror sends on a closing channel", .serialized, .timeLimit(.minutes(1)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorSendClosingChannelTests {
    @Test(
        "a query queued behind a close of its channel sees the close: it fails with connectionLost, without being written"
    )
    func sendWhileTheChannelCloses() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let logger = Logger(label: "test")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await PostgresConnection.connect(
            on: group.next(), configuration: postgres, id: 1, logger: logger)
        #expect(try await connection.send("SELECT 1", logger: logger).collect().count == 1)

        // The connection's event loop stops: the close below and the query after it queue on it,
        // in that order, and the channel reads as open until the loop runs the close.
        let gate = DispatchSemaphore(value: 0)
        connection.eventLoop.execute { gate.wait() }
        let closed: EventLoopFuture<Void> = connection.close()
        #expect(!connection.isClosed)
        let sent = Task { try await connection.send("SELECT 1", logger: logger).collect().count }
        try await Task.sleep(for: .milliseconds(200))
        gate.signal()
        let error = await #expect(throws: MirrorError.self) { try await sent.value }
        if case .connectionLost = error {
        } else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
        }
        try await closed.get()
        #expect(connection.isClosed)
        try await group.shutdownGracefully()
    }
}
