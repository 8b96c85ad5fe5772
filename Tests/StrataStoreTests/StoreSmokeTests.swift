import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

@Suite struct StoreSmokeTests {
    @Test func insertReadReopenHistoryCompact() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let department = store!.allocateKeys(for: 0).lowerBound
        var first = Transaction(author: "tests")
        first.insert(0, key: department, row: Row([.string("R&D"), .double(1e6)]))
        let keys = store!.allocateKeys(for: 1, count: 100)
        for key in keys { first.insert(1, key: key, row: TestSchema.employee(Int(key), department: department)) }
        let sequence = try store!.commit(first)
        #expect(sequence == 1)
        #expect(try store!.read(1, key: 5) == TestSchema.employee(5, department: department))
        var second = Transaction()
        second.update(1, key: 5, row: TestSchema.employee(500), changedColumns: [0, 1, 2, 3])
        second.delete(1, key: 6)
        #expect(try store!.commit(second) == 2)
        #expect(try store!.read(1, key: 6) == nil)
        #expect(try store!.keys(1, column: 3, matching: .equal(.reference(department))).count == 98)
        try store!.close()
        store = nil

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store!.read(1, key: 5) == TestSchema.employee(500))
        #expect(try store!.read(1, key: 6) == nil)
        #expect(store!.count(1) == 99)
        #expect(try store!.keys(1, column: 3, matching: .equal(.reference(department))).count == 98)
        let history = try store!.history()
        #expect(history.map(\.sequence) == [1, 2])
        #expect(history[0].author == "tests")
        #expect(history[1].changes.last?.tombstone?[0] == .string("Employee 6"))
        var scanned = 0
        try store!.scan(1) { _, _ in scanned += 1 }
        #expect(scanned == 99)
        try store!.deleteHistory(before: 3)
        let report = try store!.compact()
        #expect(report.segmentsCompacted == 1)
        #expect(try store!.read(1, key: 5) == TestSchema.employee(500))
        try store!.close()
        store = nil

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store!.read(1, key: 7) == TestSchema.employee(7, department: department))
        #expect(store!.count(1) == 99)
        #expect(store!.allocateKeys(for: 1).lowerBound == 101)
        try store!.close()
    }

    /// Segment and checkpoint files are named by their id in eight or more zero-padded digits
    /// (as stores written before name them), and the name gives the id back.
    @Test(arguments: [UInt32(0), 7, 1_234, 12_345_678, 123_456_789, UInt32.max])
    func numberedFilesAreNamedAsTheyAlwaysWere(id: UInt32) {
        #expect(SegmentFile.fileName(id) == String(format: "%08u.log", id))
        #expect(Checkpoint.fileName(id) == String(format: "%08u.ckpt", id))
        #expect(SegmentFile.id(fromFileName: SegmentFile.fileName(id)) == id)
        #expect(Checkpoint.id(fromFileName: Checkpoint.fileName(id)) == id)
    }
}
