import Foundation
import Testing
@testable import StrataStore

/// What a commit keeps of a row for the fetch indexes: the values of the indexed columns, read
/// from a whole row or decoded alone from a row's bytes as a replay does.
@Suite struct IndexedValuesTests {
    static let entity = EntitySchema(
        id: 0, name: "Wide",
        columns: [
            ColumnSchema(name: "name", type: .string, isIndexed: true),
            ColumnSchema(name: "notes", type: .string),
            ColumnSchema(name: "score", type: .int64, isIndexed: true),
            ColumnSchema(name: "owner", type: .reference(entity: 0)),
            ColumnSchema(name: "photo", type: .binary),
            ColumnSchema(name: "ratio", type: .double, isIndexed: true),
            ColumnSchema(name: "id", type: .uuid),
            ColumnSchema(name: "rank", type: .int32, isIndexed: true),
        ])

    /// A row of ``entity`` with each column `null` one time in three.
    static func row(using generator: inout some RandomNumberGenerator) -> Row {
        let values: [Value] = [
            .string("name \(Int.random(in: 0...999, using: &generator))"),
            .string(String(repeating: "n", count: Int.random(in: 0...40, using: &generator))),
            .int(Int64.random(in: -1_000...1_000, using: &generator)),
            .reference(Int64.random(in: 1...50, using: &generator)),
            .data(Data(repeating: 7, count: Int.random(in: 0...30, using: &generator))),
            .double(Double.random(in: 0...1, using: &generator)),
            .uuid(UUID()), .int(Int64.random(in: 0...9, using: &generator)),
        ]
        return Row(values.map { Int.random(in: 0..<3, using: &generator) == 0 ? .null : $0 })
    }

    /// The values `values` holds for `columns`, in order.
    static func list(_ values: IndexedValues, _ columns: [Int]) -> [Value] {
        columns.enumerated().map { values.value(at: $0.offset, column: $0.element) }
    }

    static func encoded(_ row: Row, _ codec: RowCodec) -> [UInt8] {
        var writer = BinaryWriter()
        codec.encode(row, into: &writer)
        return writer.bytes
    }

    @Test(arguments: [[Int](), [2], [0, 3], [0, 2, 5], [0, 2, 3, 5, 7], [7]])
    func theIndexedColumnsOfARowDecodeAsTheRowHoldsThem(columns: [Int]) throws {
        var generator = SystemRandomNumberGenerator()
        let codec = RowCodec(Self.entity)
        for _ in 0..<200 {
            let row = Self.row(using: &generator)
            let values = try Self.encoded(row, codec).withUnsafeBytes { try codec.decodeIndexed($0, columns: columns) }
            #expect(Self.list(values, columns) == columns.map { row[$0] })
            #expect(Self.list(IndexedValues.row(row), columns) == columns.map { row[$0] })
        }
    }

    @Test func columnsARowWasWrittenWithoutTakeTheirPadding() throws {
        var generator = SystemRandomNumberGenerator()
        // Rows of an earlier version held the first six columns; `id` and `rank` came later.
        let old = RowCodec(EntitySchema(id: 0, name: "Wide", columns: Array(Self.entity.columns.prefix(6))))
        let codec = RowCodec(Self.entity, storedColumns: 6, padding: [.null, .int(3)])
        for _ in 0..<50 {
            let row = Self.row(using: &generator)
            let stored = Row(Array(row.values.prefix(6)))
            let values = try Self.encoded(stored, old).withUnsafeBytes {
                try codec.decodeIndexed($0, columns: [0, 2, 5, 7])
            }
            #expect(Self.list(values, [0, 2, 5, 7]) == [row[0], row[2], row[5], .int(3)])
        }
    }
}
