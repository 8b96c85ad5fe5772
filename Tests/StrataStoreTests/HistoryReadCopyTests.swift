import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Reading history copies the store's directory of retained transactions a part at a time: a
/// read from the oldest retained transaction still visits each one once, in order, across the
/// parts; transactions committed while it reads are left for the next read; history deleted
/// past what it has read stops it with `historyUnavailable`.
@Suite struct HistoryReadCopyTests {
    /// More transactions than two copies of the directory hold.
    static let transactions = 2 * Store.historyEntriesPerCopy + 100

    static func makeStore(at url: URL) throws -> Store {
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        configuration.logger.logLevel = .error
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        for key in 1...transactions {
            var transaction = Transaction()
            transaction.insert(TestSchema.employee, key: PrimaryKey(key), row: TestSchema.employee(key))
            try store.commit(transaction)
        }
        return store
    }

    @Test func readsFromTheOldestVisitEachTransactionOnceAndLeaveLaterOnes() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(at: directory.store())
        defer { try? store.close() }
        var seen: [UInt64] = []
        try store.forEachHistoryTransaction(after: 0) { transaction in
            if seen.isEmpty {
                // Committed after the read started: not part of it.
                var transaction = Transaction()
                transaction.insert(TestSchema.employee, key: PrimaryKey(Self.transactions + 1), row: TestSchema.employee(0))
                try store.commit(transaction)
            }
            seen.append(transaction.sequence)
            return true
        }
        #expect(seen == Array(1...UInt64(Self.transactions)))
        var later: [UInt64] = []
        try store.forEachHistoryTransaction(after: UInt64(Store.historyEntriesPerCopy) - 1) { transaction in
            later.append(transaction.sequence)
            return true
        }
        #expect(later == Array(UInt64(Store.historyEntriesPerCopy)...UInt64(Self.transactions + 1)))
    }

    @Test func historyDeletedPastWhatWasReadStopsTheRead() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(at: directory.store())
        defer { try? store.close() }
        var seen = 0
        let error = #expect(throws: StoreError.self) {
            try store.forEachHistoryTransaction(after: 0) { _ in
                seen += 1
                if seen == 10 { try store.deleteHistory(before: UInt64(Store.historyEntriesPerCopy + 50)) }
                return true
            }
        }
        #expect(error?.code == .historyUnavailable)
        // The first copy was read to its end; the deleted history after it was not.
        #expect(seen == Store.historyEntriesPerCopy)
    }
}
