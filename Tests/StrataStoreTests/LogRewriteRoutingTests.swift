import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// `Store.rewriteLog` with ``LogRewrite/routes``: the rows of one old entity go to two new
/// entities by their tag (an entity moved out of its hierarchy), rows converted to `nil` are
/// dropped with their operations; keys, history and next keys follow each row.
@Suite struct LogRewriteRoutingTests {
    /// One entity whose rows carry a tag (1, 2 or 3) and a name.
    static let before = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Thing",
            columns: [
                ColumnSchema(name: "_entity", type: .int16), ColumnSchema(name: "name", type: .string),
            ])
    ])
    /// Tag 1 stays in entity 0, tag 2 moves to entity 1 (with a new column); tag 3 is gone.
    static let after = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Thing",
            columns: [
                ColumnSchema(name: "_entity", type: .int16), ColumnSchema(name: "name", type: .string),
            ]),
        EntitySchema(
            id: 1, name: "Other",
            columns: [
                ColumnSchema(name: "_entity", type: .int16), ColumnSchema(name: "name", type: .string),
                ColumnSchema(name: "extra", type: .string),
            ]),
    ])

    static var rewrite: LogRewrite {
        var rewrite = LogRewrite(schema: after, entities: [0: 0], columns: [0: [0: 0, 1: 1]]) { _, _, row in
            switch row[0] {
            case .int(1): return row
            case .int(2): return Row([.int(1), row[1], .string("moved")])
            case .null: return Row([.null, .null])
            default: return nil
            }
        }
        rewrite.routes = [0: [1: 0, 2: 1]]
        rewrite.routedColumns = [0: [0: [0: 0, 1: 1], 1: [0: 0, 1: 1]]]
        return rewrite
    }

    /// The tag of key `key`.
    static func tag(_ key: Int64) -> Int64 { key % 3 + 1 }

    @Test func rowsGoToTheirEntityByTag() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.segmentSize = 2 << 10
        let store = try Store.open(at: url, schema: Self.before, configuration: configuration)
        var insert = Transaction()
        for key in store.allocateKeys(for: 0, count: 30) {
            insert.insert(0, key: key, row: Row([.int(Self.tag(key)), .string("n\(key)")]))
        }
        try store.commit(insert)
        var change = Transaction()
        for key: Int64 in [1, 2, 3] {
            change.update(0, key: key, row: Row([.int(Self.tag(key)), .string("u\(key)")]), changedColumns: [1])
        }
        for key: Int64 in [4, 5, 6] { change.delete(0, key: key) }
        try store.commit(change)
        try store.close()

        let report = try Store.rewriteLog(at: url, Self.rewrite, configuration: configuration)
        #expect(report.records == 2)
        let reopened = try Store.open(at: url, schema: Self.after, configuration: configuration)
        var kept: [Int64: Row] = [:], moved: [Int64: Row] = [:]
        try reopened.scan(0) { key, row in kept[key] = row }
        try reopened.scan(1) { key, row in moved[key] = row }
        let live = (1...30).filter { ![4, 5, 6].contains($0) }.map(Int64.init)
        #expect(Set(kept.keys) == Set(live.filter { Self.tag($0) == 1 }))
        #expect(Set(moved.keys) == Set(live.filter { Self.tag($0) == 2 }))
        #expect(kept[3]?[1] == .string("u3"))
        #expect(moved[1]?[1] == .string("u1"))
        #expect(moved[7]?[2] == .string("moved"))
        // The history follows each row: the update and delete of key 2 (tag 3) are gone.
        var changes: [UInt64: [(entity: Int, key: Int64, kind: ChangeKind)]] = [:]
        try reopened.forEachHistoryTransaction(after: 0) { transaction in
            changes[transaction.sequence] = transaction.changes.map { ($0.entity, $0.key, $0.kind) }
            return true
        }
        let second = changes.keys.sorted().last.flatMap { changes[$0] } ?? []
        #expect(second.filter { $0.kind == .update }.map { "\($0.entity):\($0.key)" }.sorted() == ["0:3", "1:1"])
        #expect(second.filter { $0.kind == .delete }.map { "\($0.entity):\($0.key)" }.sorted() == ["0:6", "1:4"])
        // Each new entity allocates after every old key.
        #expect(reopened.allocateKeys(for: 1).lowerBound > 30)
        try reopened.close()
    }
}
