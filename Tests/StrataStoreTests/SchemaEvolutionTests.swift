import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// In-place schema evolution: the manifest's schema grows, rows written before are read with
/// their new columns defaulted, nothing of the log is rewritten until compaction.
@Suite struct SchemaEvolutionTests {
    /// The test schema with a nullable `title` and a non-nullable `level` appended to employees,
    /// a fetch index on `notes`, and a new `Project` entity.
    static let evolved = try! Schema(entities: [
        TestSchema.schema.entities[0],
        EntitySchema(
            id: 1, name: "Employee",
            columns: TestSchema.schema.entities[1].columns.enumerated().map { position, column in
                var column = column
                if position == 2 { column.isIndexed = true }
                return column
            } + [
                ColumnSchema(name: "title", type: .string),
                ColumnSchema(name: "level", type: .int16, isNullable: false),
            ]),
        EntitySchema(id: 2, name: "Project", columns: [ColumnSchema(name: "lead", type: .reference(entity: 1))]),
    ])

    /// Writes 300 employees (every third deleted later) and closes the store; returns their keys.
    private func fill(_ url: URL) throws -> [Int64] {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var insert = Transaction()
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 300))
        for key in keys { insert.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key))) }
        try store.commit(insert)
        var delete = Transaction()
        for key in keys where key % 3 == 0 { delete.delete(TestSchema.employee, key: key) }
        try store.commit(delete)
        try store.close()
        return keys.filter { $0 % 3 != 0 }
    }

    /// The format version in the header of the store's manifest.
    private static func manifestFormatVersion(_ url: URL) throws -> UInt32 {
        let bytes = [UInt8](try Data(contentsOf: url.appendingPathComponent("manifest")))
        return bytes[8..<12].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test func olderRowsReadNewColumnsAsDefaultsAndCompactionRewritesThem() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let live = try fill(url)
        let bytesBefore = StoreFiles.segmentFileBytes(url)
        #expect(try Self.manifestFormatVersion(url) == Store.formatVersion)
        #expect(
            try Store.evolveSchema(
                at: url, to: Self.evolved, defaults: [1: [5: .int(3)]], configuration: TestSchema.configuration()))
        #expect(StoreFiles.segmentFileBytes(url) == bytesBefore)
        // Builds that cannot read older schema versions refuse the store.
        #expect(try Self.manifestFormatVersion(url) == Manifest.evolvedFormatVersion)
        #expect(try Store.storedSchema(at: url) == Self.evolved)
        #expect(try !Store.evolveSchema(at: url, to: Self.evolved, configuration: TestSchema.configuration()))

        var store = try Store.open(at: url, schema: Self.evolved, configuration: TestSchema.configuration())
        for key in live {
            #expect(try store.read(1, key: key) == Row(TestSchema.employee(Int(key)).values + [.null, .int(3)]))
        }
        // The new fetch index was built from the older rows.
        let notes = TestSchema.employee(Int(live[0])).values[2]
        #expect(try store.keys(1, column: 2, matching: .equal(notes)) == [live[0]])
        var write = Transaction()
        write.update(
            1, key: live[0], row: Row(TestSchema.employee(1).values + [.string("lead"), .int(7)]),
            changedColumns: [4, 5])
        let project = store.allocateKeys(for: 2).lowerBound
        write.insert(2, key: project, row: Row([.reference(live[0])]))
        try store.commit(write)
        #expect(try store.history().count == 3)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        try store.close()

        store = try Store.open(at: url, schema: Self.evolved, configuration: TestSchema.configuration())
        #expect(try store.read(1, key: live[0]) == Row(TestSchema.employee(1).values + [.string("lead"), .int(7)]))
        for key in live.dropFirst() {
            #expect(try store.read(1, key: key) == Row(TestSchema.employee(Int(key)).values + [.null, .int(3)]))
        }
        #expect(try store.read(2, key: project) == Row([.reference(live[0])]))
        var scanned = 0
        try store.scan(1) { _, row in
            scanned += 1
            #expect(row.count == 6)
        }
        #expect(scanned == live.count)
        try store.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aChangeThatIsNotAnAppendIsRefusedAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let live = try fill(url)
        var retyped = TestSchema.schema.entities
        retyped[1].columns[2].type = .binary
        let manifest = try Data(contentsOf: url.appendingPathComponent("manifest"))
        #expect {
            try Store.evolveSchema(
                at: url, to: try Schema(entities: retyped), configuration: TestSchema.configuration())
        } throws: { ($0 as? StoreError)?.code == .schemaMismatch }
        // `level` is not nullable and has no default.
        #expect {
            try Store.evolveSchema(at: url, to: Self.evolved, configuration: TestSchema.configuration())
        } throws: { ($0 as? StoreError)?.code == .schemaMismatch }
        #expect(try Data(contentsOf: url.appendingPathComponent("manifest")) == manifest)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store.read(1, key: live[0]) == TestSchema.employee(Int(live[0])))
        try store.close()
    }

    @Test func anOpenStoreIsNotEvolved() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        _ = try fill(url)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect {
            try Store.evolveSchema(
                at: url, to: Self.evolved, defaults: [1: [5: .int(3)]], configuration: TestSchema.configuration())
        } throws: { ($0 as? StoreError)?.code == .locked }
        try store.close()
    }
}
