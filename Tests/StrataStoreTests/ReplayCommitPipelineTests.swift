import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A replay writes each batch on another thread while it re-encodes the next: changes of keys
/// the batch in flight wrote take their prior rows from that batch, so the destination ends with
/// the source's rows, fetch index and history; a batch whose write fails stops the replay with its
/// error, commits nothing after it, and the next replay resumes after what was written.
@Suite struct ReplayCommitPipelineTests {
    /// Transactions in which each inserts an employee, updates the salary (indexed) of the one
    /// inserted just before, and every seventh deletes the one inserted three before: over several
    /// batches, so the first transactions of each batch change keys of the batch before.
    static let count = 3 * Store.replayBatchLimits.transactions + 50

    static func source(at url: URL) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let transactions = (1...count).map { index in
            var transaction = Transaction(author: "writer \(index)")
            transaction.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index))
            if index > 1 && (index - 1) % 7 != 4 {
                transaction.update(
                    TestSchema.employee, key: Int64(index - 1), row: TestSchema.employee(index * 13),
                    changedColumns: [0, 1, 2])
            }
            if index > 3 && index % 7 == 0 { transaction.delete(TestSchema.employee, key: Int64(index - 3)) }
            return transaction
        }
        try store.commit(transactions)
        return store
    }

    /// Every employee key by salary, lowest first, as the fetch index answers.
    static func bySalary(_ store: Store) throws -> [PrimaryKey] {
        try store.keys(TestSchema.employee, column: 1, matching: .range(lower: nil, upper: nil))
    }

    @Test func batchesWrittenWhileTheNextIsBuiltEndWithTheSourcesRowsIndexAndHistory() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(at: directory.store("Source"))
        defer { try? source.close() }
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination.replayHistory(from: source) == Self.count)
        #expect(destination.statistics.commitGroups >= 4, "one append a batch")
        #expect(try Self.bySalary(destination) == Self.bySalary(source))
        try destination.close()
        #expect(try Store.verify(at: url).problems == [])

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? destination.close() }
        #expect(try Self.bySalary(destination) == Self.bySalary(source))
        let replica = try destination.history()
        let original = try source.history()
        #expect(replica.map { $0.changes.map(\.key) } == original.map { $0.changes.map(\.key) })
        #expect(replica.map { $0.changes.map(\.previousRow) } == original.map { $0.changes.map(\.previousRow) })
        for key in 1...Int64(Self.count) {
            #expect(try destination.read(TestSchema.employee, key: key) == source.read(TestSchema.employee, key: key))
        }
    }

    @Test func aBatchWhoseWriteFailsStopsTheReplayAndTheNextReplayResumes() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(at: directory.store("Source"))
        defer { try? source.close() }
        let url = directory.store("Destination")
        let io = FaultyIO()
        var configuration = TestSchema.configuration()
        configuration.io = io
        configuration.logger.logLevel = .critical
        var destination: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        // The first batch's append fails while the replay builds the second.
        io.arm([.segmentWrite(.fail(EIO))])
        var reported = 0
        let error = #expect(throws: StoreError.self) {
            try destination!.replayHistory(from: source) { applied, _ in reported = applied }
        }
        #expect(reported > Store.replayBatchLimits.transactions, "the next batch was being built")
        #expect(error?.code == .io)
        #expect(destination!.lastSequence == 0, "no batch after the failed one was written")
        #expect(destination!.statistics.commits == 0)
        destination = nil

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination!.replayHistory(from: source) == Self.count)
        #expect(try destination!.history().map(\.author) == (1...Self.count).map { "writer \($0)" })
        #expect(try Self.bySalary(destination!) == Self.bySalary(source))
        try destination!.close()
    }
}
