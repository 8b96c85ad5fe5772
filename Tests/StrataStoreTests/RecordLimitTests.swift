import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A transaction too large for one record (its header counts 65,535 blocks and 1 GiB) is refused
/// with a typed error before anything is written, as the 10-million-object scale run found: it
/// trapped on the block count.
@Suite struct RecordLimitTests {
    @Test("a transaction of more blocks than a record holds is invalidValue, and the store goes on")
    func tooManyBlocks() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.blockSize = 1  // a block per row
        var store: Store? = try Store.open(at: directory.url, schema: TestSchema.schema, configuration: configuration)
        let first = try RowStartTests.insert(10, into: store!)

        let count = RecordHeader.maxBlocks + 1
        let keys = Array(store!.allocateKeys(for: TestSchema.employee, count: count))
        var transaction = Transaction()
        for (index, key) in keys.enumerated() {
            transaction.insert(TestSchema.employee, key: key, row: RowStartTests.employee(index))
        }
        let error = #expect(throws: StoreError.self) { try store!.commit(transaction) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("\(count) blocks") == true, "\(String(describing: error))")
        #expect(store!.statistics.liveRows == 10)
        #expect(try store!.read(TestSchema.employee, key: keys[0]) == nil)

        // The largest transaction a record holds commits, and everything survives a reopen.
        var fitting = Transaction()
        for (index, key) in keys.prefix(RecordHeader.maxBlocks - 1).enumerated() {
            fitting.insert(TestSchema.employee, key: key, row: RowStartTests.employee(index))
        }
        try store!.commit(fitting)
        try store!.close()
        store = nil
        let reopened = try Store.open(at: directory.url, schema: TestSchema.schema, configuration: configuration)
        #expect(reopened.statistics.liveRows == 10 + RecordHeader.maxBlocks - 1)
        #expect(try reopened.read(TestSchema.employee, key: first[3]) == RowStartTests.employee(3))
        #expect(
            try reopened.read(TestSchema.employee, key: keys[RecordHeader.maxBlocks - 2])
                == RowStartTests.employee(RecordHeader.maxBlocks - 2))
        #expect(try reopened.read(TestSchema.employee, key: keys[RecordHeader.maxBlocks - 1]) == nil)
        try reopened.close()
    }
}
