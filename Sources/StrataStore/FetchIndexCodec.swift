/// How a checkpoint stores one entity's fetch indexes: each column's (value, key) pairs in index
/// order.
///
/// Layout: varint column count; per column varint column, varint pair count, `u8` encoding and
/// the pairs. Encoding 0 holds any values: per pair the zigzag difference of its key from the
/// previous pair's, then the value as a one-column row. Encodings 1 (integers) and 2 (to-one
/// references) hold a column whose values are all nil or all of that kind: a varint count of
/// nil values (they come first) and their keys' differences, then per other pair the zigzag
/// difference of its value from the previous one's and of its key from the previous one's. A
/// sorted column's values differ little from one pair to the next, and the keys of equal values
/// ascend, so most pairs take two or three bytes instead of five to eight.
enum FetchIndexCodec {
    /// The encodings of a column's pairs.
    private enum Encoding: UInt8 {
        case rows = 0
        case integers = 1
        case references = 2
    }

    /// The stored form of `indexes`, the fetch indexes of `entity`, by column.
    static func encode(_ indexes: [Int: OrderedIndex], entity: EntitySchema) -> [UInt8] {
        var writer = BinaryWriter()
        let columns = indexes.sorted { $0.key < $1.key }
        writer.varint(columns.count)
        for (column, ordered) in columns {
            writer.varint(column)
            writer.varint(ordered.count)
            let (encoding, nulls) = Self.encoding(of: ordered)
            writer.u8(encoding.rawValue)
            var previousKey: Int64 = 0
            func key(_ key: PrimaryKey) {
                writer.zigzag(key &- previousKey)
                previousKey = key
            }
            switch encoding {
            case .rows:
                let codec = Checkpoint.valueCodec(entity.columns[column])
                ordered.forEach { value, primaryKey in
                    key(primaryKey)
                    codec.encode(Row([value]), into: &writer)
                }
            case .integers, .references:
                writer.varint(nulls)
                var previousValue: Int64 = 0
                ordered.forEach { value, primaryKey in
                    switch value {
                    case .int(let number), .reference(let number):
                        writer.zigzag(number &- previousValue)
                        previousValue = number
                    default: break
                    }
                    key(primaryKey)
                }
            }
        }
        return writer.bytes
    }

    /// The encoding for the pairs of `index` (integers or references when every value is nil or
    /// of that kind), and how many of its values are nil.
    private static func encoding(of index: OrderedIndex) -> (Encoding, nulls: Int) {
        var integers = true
        var references = true
        var nulls = 0
        index.forEach { value, _ in
            switch value {
            case .null: nulls += 1
            case .int: references = false
            case .reference: integers = false
            default: (integers, references) = (false, false)
            }
        }
        return (integers ? .integers : references ? .references : .rows, nulls)
    }

    /// Parses the stored fetch indexes of `entity` into `indexes`, whose keys are the entity's
    /// indexed columns.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not parse or name a column that is
    ///   not indexed.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, entity: EntitySchema, into indexes: inout [Int: OrderedIndex]
    ) throws {
        var reader = BinaryReader(bytes)
        for _ in 0..<(try reader.count(limit: 4096)) {
            let column = try reader.count(limit: 4095)
            guard indexes[column] != nil else { throw BinaryReader.Malformed(offset: reader.position) }
            // At least a byte a pair (a key's difference): a count the bytes cannot hold reserves
            // nothing.
            let pairCount = try reader.count(limit: reader.remaining)
            guard let encoding = Encoding(rawValue: try reader.u8()) else {
                throw BinaryReader.Malformed(offset: reader.position - 1)
            }
            var pairs: [(Value, PrimaryKey)] = []
            pairs.reserveCapacity(pairCount)
            var previousKey: Int64 = 0
            func key() throws -> PrimaryKey {
                previousKey = previousKey &+ (try reader.zigzag())
                return previousKey
            }
            switch encoding {
            case .rows:
                let codec = Checkpoint.valueCodec(entity.columns[column])
                for _ in 0..<pairCount {
                    let primaryKey = try key()
                    pairs.append((try codec.decodeSingleValue(from: &reader), primaryKey))
                }
            case .integers, .references:
                let nulls = try reader.count(limit: pairCount)
                for _ in 0..<nulls { pairs.append((.null, try key())) }
                var value: Int64 = 0
                for _ in nulls..<pairCount {
                    value = value &+ (try reader.zigzag())
                    pairs.append((encoding == .integers ? .int(value) : .reference(value), try key()))
                }
            }
            indexes[column] = OrderedIndex(ordered: pairs)
        }
    }
}
