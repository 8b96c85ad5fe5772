@testable import StrataStore
import Testing

/// How checkpoints store fetch indexes: sorted integers and references bit-packed as differences,
/// rows of any other value.
@Suite struct FetchIndexCodecTests {
    static let entity = EntitySchema(
        id: 0, name: "Item",
        columns: [
            ColumnSchema(name: "count", type: .int64, isIndexed: true),
            ColumnSchema(name: "owner", type: .reference(entity: 0)),
            ColumnSchema(name: "name", type: .string, isIndexed: true),
            ColumnSchema(name: "score", type: .double, isIndexed: true),
        ])

    static func index(_ pairs: [(Value, PrimaryKey)]) -> OrderedIndex {
        var index = OrderedIndex()
        for (value, key) in pairs { index.insert(value, key: key) }
        return index
    }

    static func pairs(_ index: OrderedIndex) -> [String] {
        var pairs: [String] = []
        index.forEach { value, key in pairs.append("\(value) \(key)") }
        return pairs
    }

    static func roundTrip(_ indexes: [Int: OrderedIndex]) throws -> (bytes: [UInt8], decoded: [Int: OrderedIndex]) {
        let bytes = FetchIndexCodec.encode(indexes, entity: entity)
        var decoded = Dictionary(uniqueKeysWithValues: entity.indexedColumns.map { ($0, OrderedIndex()) })
        try bytes.withUnsafeBytes { try FetchIndexCodec.decode($0, entity: entity, into: &decoded) }
        return (bytes, decoded)
    }

    @Test("integers, references, strings and doubles with nulls and extremes decode to the same pairs")
    func everyKindRoundTrips() throws {
        let indexes: [Int: OrderedIndex] = [
            0: Self.index([
                (.null, 7), (.null, 3), (.int(.min), 9), (.int(.max), 1), (.int(-5), 12), (.int(0), .max), (.int(-5), 4),
            ]),
            1: Self.index([(.reference(2), 10), (.reference(2), 8), (.null, 1), (.reference(.max), 2)]),
            2: Self.index([(.string("b"), 1), (.null, 2), (.string("a"), 3)]),
            3: Self.index([(.double(2.5), 1), (.double(-3), 2), (.null, 3)]),
        ]
        let decoded = try Self.roundTrip(indexes).decoded
        for column in indexes.keys {
            #expect(Self.pairs(decoded[column]!) == Self.pairs(indexes[column]!), "column \(column)")
        }
        let empty = try Self.roundTrip([0: OrderedIndex()]).decoded
        #expect(empty[0]!.count == 0)
    }

    @Test("sorted integers and references take under 2 bytes a pair")
    func integersAreSmall() throws {
        var salaries: [(Value, PrimaryKey)] = []
        var owners: [(Value, PrimaryKey)] = []
        var random = SystemRandomNumberGenerator()
        for key in 1...10_000 {
            salaries.append((.int(Int64.random(in: 30_000...200_000, using: &random)), PrimaryKey(key)))
            owners.append((.reference(PrimaryKey(key % 10 + 1)), PrimaryKey(key)))
        }
        let (bytes, decoded) = try Self.roundTrip([0: Self.index(salaries), 1: Self.index(owners)])
        // As varint differences they took about 3 bytes a pair.
        #expect(bytes.count < 2 * 20_000, "\(bytes.count) bytes for 20,000 pairs")
        #expect(Self.pairs(decoded[0]!) == Self.pairs(Self.index(salaries)))
        #expect(Self.pairs(decoded[1]!) == Self.pairs(Self.index(owners)))
    }

    @Test("bytes that are not fetch indexes do not decode")
    func damagedBytesDoNotDecode() throws {
        let bytes = FetchIndexCodec.encode([0: Self.index([(.int(4), 1), (.int(9), 2)])], entity: Self.entity)
        var damaged: [[UInt8]] = [Array(bytes.dropLast())]
        var encoding = bytes
        encoding[3] = 7  // An unknown encoding.
        damaged.append(encoding)
        var column = bytes
        column[1] = 9  // A column without a fetch index.
        damaged.append(column)
        for bytes in damaged {
            var decoded = Dictionary(uniqueKeysWithValues: Self.entity.indexedColumns.map { ($0, OrderedIndex()) })
            #expect(throws: BinaryReader.Malformed.self) {
                try bytes.withUnsafeBytes { try FetchIndexCodec.decode($0, entity: Self.entity, into: &decoded) }
            }
        }
    }
}
