import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// `Store.rewriteLog`: every record of the log written again under a new schema, rows
/// converted, keys, sequences and history kept; all or nothing.
@Suite struct LogRewriteTests {
    /// Employees only (the department entity dropped), now entity 0: `name`, `salary` as a
    /// string, `notes` dropped, a new `code` column; `department` is gone with its entity.
    static let rewritten = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Employee",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, keepsTombstone: true),
                ColumnSchema(name: "salary", type: .string, isIndexed: true),
                ColumnSchema(name: "code", type: .string),
            ])
    ])

    /// The rewrite to ``rewritten``: `salary` becomes its decimal text, `code` is `k<key>`.
    static let rewrite = LogRewrite(
        schema: rewritten, entities: [TestSchema.employee: 0], columns: [TestSchema.employee: [0: 0, 1: 1]]
    ) { _, key, row in
        guard case .int(let salary) = row[1] else { return Row([row[0], .null, .null]) }
        return Row([row[0], .string(String(salary)), .string("k\(key)")])
    }

    /// The employee row `index` (key `index`) after the rewrite.
    static func converted(_ index: Int, key: Int64) -> Row {
        let old = TestSchema.employee(index)
        guard case .int(let salary) = old[1] else { return old }
        return Row([old[0], .string(String(salary)), .string("k\(key)")])
    }

    /// A configuration with small segments, so that the log spans several.
    static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 8 << 10
        return configuration
    }

    /// 600 employees in batches of 50 with departments, every third deleted, 20 salaries raised;
    /// returns the live keys, each employee's index, and the last sequence.
    private func fill(_ url: URL) throws -> (live: [Int64], index: [Int64: Int], sequence: UInt64) {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var department = Transaction()
        department.insert(TestSchema.department, key: 1, row: Row([.string("D"), .double(1)]))
        try store.commit(department)
        var index: [Int64: Int] = [:]
        for batch in 0..<12 {
            var insert = Transaction()
            insert.author = "importer"
            for key in store.allocateKeys(for: TestSchema.employee, count: 50) {
                index[key] = batch * 50 + Int(key % 50)
                insert.insert(TestSchema.employee, key: key, row: TestSchema.employee(index[key]!, department: 1))
            }
            try store.commit(insert)
        }
        var delete = Transaction()
        for key in index.keys where key % 3 == 0 { delete.delete(TestSchema.employee, key: key) }
        try store.commit(delete)
        var raise = Transaction()
        for key in index.keys.sorted().filter({ $0 % 3 != 0 }).prefix(20) {
            var row = TestSchema.employee(index[key]!, department: 1)
            row[1] = .int(1_000_000 + key)
            raise.update(TestSchema.employee, key: key, row: row, changedColumns: [1])
        }
        try store.commit(raise)
        let sequence = store.lastSequence
        try store.close()
        return (index.keys.filter { $0 % 3 != 0 }.sorted(), index, sequence)
    }

    @Test func rowsConvertKeysSequencesAndHistoryStay() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let filled = try fill(url)
        let before = try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments")
        #expect(before.count > 1, "the log spans several segments")
        let report = try Store.rewriteLog(at: url, Self.rewrite, configuration: Self.configuration())
        #expect(report.segmentsRead == before.count)
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments")).isDisjoint(with: before))
        #expect(try Store.storedSchema(at: url) == Self.rewritten)

        for _ in 0..<2 {
            let store = try Store.open(at: url, schema: Self.rewritten, configuration: Self.configuration())
            #expect(store.lastSequence == filled.sequence)
            #expect(store.count(0) == filled.live.count)
            let raised = Set(filled.live.prefix(20))
            for key in filled.live {
                var expected = Self.converted(filled.index[key]!, key: key)
                if raised.contains(key) { expected[1] = .string(String(1_000_000 + key)) }
                #expect(try store.read(0, key: key) == expected)
            }
            #expect(try store.read(0, key: 3) == nil, "deleted rows stay deleted")
            // The history: the inserts under their author, the deletes with tombstones, the raise
            // with its prior rows and changed column, all converted.
            let history = try store.history()
            #expect(history.count == 15)
            #expect(history.filter { $0.author == "importer" }.count == 12)
            let raise = try #require(history.last)
            #expect(raise.changes.count == 20)
            for change in raise.changes {
                #expect(change.entity == 0)
                #expect(change.changedColumns == [1])
                #expect(change.row?[1] == .string(String(1_000_000 + change.key)))
                #expect(change.previousRow == Self.converted(filled.index[change.key]!, key: change.key))
            }
            let deletes = try #require(history.dropLast().last)
            #expect(deletes.changes.count == 200)
            for change in deletes.changes {
                #expect(change.kind == .delete)
                #expect(
                    change.tombstone
                        == Row([Self.converted(filled.index[change.key]!, key: change.key)[0], .null, .null]))
                #expect(change.previousRow == Self.converted(filled.index[change.key]!, key: change.key))
            }
            let raisedKey = try #require(filled.live.first)
            #expect(
                try store.keys(0, column: 1, matching: .equal(.string(String(1_000_000 + raisedKey)))) == [raisedKey])
            // The fetch index on the converted column was rebuilt; new keys come after the old ones.
            let next = try #require(store.allocateKeys(for: 0, count: 1).first)
            #expect(next > filled.live.last!)
            try store.close()
        }
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aFailingConversionLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let filled = try fill(url)
        let before = try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").sorted()
        let failing = LogRewrite(schema: Self.rewritten, entities: [TestSchema.employee: 0], columns: [:]) {
            _, key, row in
            guard key < 500 else { throw StoreError(.corrupt, "refused") }
            return try Self.rewrite.convert(TestSchema.employee, key, row)
        }
        #expect(throws: StoreError.self) { try Store.rewriteLog(at: url, failing, configuration: Self.configuration()) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").sorted() == before)
        #expect(try Store.storedSchema(at: url) == TestSchema.schema)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store.count(TestSchema.employee) == filled.live.count)
        #expect(store.lastSequence == filled.sequence)
        try store.close()
    }

    @Test func anOpenStoreIsNotRewritten() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        _ = try fill(url)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(throws: StoreError.self) {
            try Store.rewriteLog(at: url, Self.rewrite, configuration: Self.configuration())
        }
        try store.close()
    }
}
