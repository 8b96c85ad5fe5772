import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Replaying history into another store after the destination crashed mid-replay: the cursor
/// travels in the destination's commits, so a reopened destination resumes after the last
/// transaction it committed and applies nothing twice.
@Suite struct HistoryReplayCrashTests {
    @Test func replayResumesAfterACrashWithoutDuplicates() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.logger.logLevel = .error
        let source = try Store.open(
            at: directory.store("Source"), schema: TestSchema.schema, configuration: configuration)
        for key in 1...6 as ClosedRange<Int64> {
            var transaction = Transaction(author: "writer \(key)")
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
            if key > 1 {
                transaction.update(
                    TestSchema.employee, key: key - 1, row: TestSchema.employee(Int(key) * 100),
                    changedColumns: [0, 1, 2])
            }
            try source.commit(transaction)
        }
        let url = directory.store("Destination")
        var destination: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var seen = 0
        // Stop after four transactions, as a crash would, and drop the store without closing it.
        struct Crash: Error {}
        #expect(throws: Crash.self) {
            try destination!.replayHistory(from: source) { applied, total in
                seen = applied
                #expect(total == 6)
                if applied == 4 { throw Crash() }
            }
        }
        #expect(seen == 4)
        destination = nil

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        let name = Store.replayConsumerName(source: source.storeID)
        #expect(destination!.historyConsumers[name]?.sequence == 4)
        #expect(try destination!.replayHistory(from: source) == 2)
        #expect(try destination!.replayHistory(from: source) == 0)
        #expect(destination!.lastSequence == 6)
        for key in 1...6 as ClosedRange<Int64> {
            #expect(try destination!.read(TestSchema.employee, key: key) == source.read(TestSchema.employee, key: key))
        }
        #expect(try destination!.history().map(\.author) == (1...6).map { "writer \($0)" })
        try destination!.close()
        try source.close()
    }
}
