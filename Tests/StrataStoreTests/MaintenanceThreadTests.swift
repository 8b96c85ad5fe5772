import Foundation
import Logging
import StrataSynchronization
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's maintenance thread lives as long as its store.
@Suite struct MaintenanceThreadTests {
    /// A store released without `close()` (as a crash-like test or a careless caller does) ends
    /// its maintenance thread, which would otherwise wake every second for the rest of the
    /// process; and the store opens again at once.
    @Test func aStoreReleasedWithoutCloseEndsItsMaintenanceThread() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.backgroundMaintenance = true
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var transaction = Transaction()
        transaction.insert(TestSchema.department, key: 1, row: Row([.string("Lab"), .double(1)]))
        try store!.commit(transaction)
        let thread = store!.maintenance
        #expect(!thread.hasEnded)
        store = nil

        let deadline = ContinuousClock.now + .seconds(10)
        while !thread.hasEnded && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(thread.hasEnded)
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        #expect(reopened.count(TestSchema.department) == 1)
        try reopened.close()
    }

    /// A round that fails as the one before did (a full disk fails every round until space
    /// returns) is logged at debug, not as another error: a fail-stopped store's rounds log one
    /// error, then debug lines.
    @Test func aRepeatedMaintenanceFailureIsLoggedAsAnErrorOnce() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        let log = CapturedLog()
        var configuration = FaultInjectionTests.configuration(io)
        configuration.logger = Logger(label: "strata.store") { _ in log }
        configuration.logger.logLevel = .debug
        let store = try FaultInjectionTests.storeWithThreeCommits(url, io: io)
        try store.close()
        let stopped = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        io.arm([.dataSync(EIO)])
        #expect(throws: StoreError.self) { try stopped.commit(FaultInjectionTests.transaction(3, stopped)) }
        for _ in 0..<3 { stopped.runMaintenance() }
        let failures = log.messages.filter { $0.message.hasPrefix("background maintenance failed") }
        #expect(failures.map(\.level) == [.error, .debug, .debug], "\(failures)")
        try stopped.close()
    }

    /// The thread's record of failures: an error is news when it starts or changes kind, and a
    /// round that succeeds after failures is news once.
    @Test func failuresAreNewsWhenTheyStartOrChangeKind() {
        let thread = MaintenanceThread()
        let full = StoreError(.diskFull, "no space", cause: POSIXError(.ENOSPC))
        #expect(!thread.recordSuccess())
        #expect(thread.recordFailure(full))
        #expect(!thread.recordFailure(StoreError(.diskFull, "no space at another offset")))
        #expect(thread.recordFailure(StoreError(.io, "read failed")))
        #expect(thread.recordFailure(CocoaError(.fileReadUnknown)))
        #expect(!thread.recordFailure(CocoaError(.fileWriteUnknown)))
        #expect(thread.recordSuccess())
        #expect(!thread.recordSuccess())
        #expect(thread.recordFailure(full))
    }
}

/// A log handler keeping every message, for tests of what is logged at which level.
final class CapturedLog: LogHandler, Sendable {
    /// One logged message.
    struct Entry: Sendable {
        /// Its level.
        var level: Logger.Level
        /// Its text.
        var message: String
    }

    private let entries = Lock<[Entry]>([])

    /// Every message logged so far, in order.
    var messages: [Entry] { entries.withLock { $0 } }

    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)")) }
    }
}
