/// How a checkpoint stores one entity's fetch indexes: each column's (value, key) pairs in index
/// order.
///
/// Layout: varint column count; per column varint column, varint pair count, `u8` encoding and
/// the pairs. Encoding 0 holds any values: per pair the zigzag difference of its key from the
/// previous pair's, then the value as a one-column row. Encodings 1 (integers) and 2 (to-one
/// references) hold a column whose values are all nil or all of that kind:
/// - a varint count of nil values (they come first) and their keys' zigzag differences;
/// - when other pairs follow, the first one's value and the smallest of their keys (zigzag
///   varints), then two runs of ``BitPackedGroups``: each value's difference from the one before
///   (0 for the first; values ascend, so no difference is negative), and each key as its
///   difference from the key before when its value is the one before's (the keys of equal values
///   ascend), otherwise as its difference from the smallest key.
///
/// A sorted column's values differ by a few bits from one pair to the next, and its keys take
/// the bits of the key range, or fewer where values repeat.
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
            let (encoding, nulls, firstValue, minimumKey) = Self.encoding(of: ordered)
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
                ordered.forEach { value, primaryKey in
                    if case .null = value { key(primaryKey) }
                }
                guard let first = firstValue else { break }
                writer.zigzag(first)
                writer.zigzag(minimumKey)
                var values = BitPackedGroups.Writer()
                var previousValue = first
                ordered.forEach { value, _ in
                    guard let number = value.indexedNumber else { return }
                    values.append(UInt64(bitPattern: number &- previousValue), to: &writer)
                    previousValue = number
                }
                values.finish(to: &writer)
                var keys = BitPackedGroups.Writer()
                var previous: (value: Int64, key: PrimaryKey)?
                ordered.forEach { value, primaryKey in
                    guard let number = value.indexedNumber else { return }
                    let base = previous.flatMap { $0.value == number ? $0.key : nil } ?? minimumKey
                    keys.append(UInt64(bitPattern: primaryKey &- base), to: &writer)
                    previous = (number, primaryKey)
                }
                keys.finish(to: &writer)
            }
        }
        return writer.bytes
    }

    /// The encoding for the pairs of `index` (integers or references when every value is nil or
    /// of that kind), how many of its values are nil, the first other value and the smallest
    /// key of a pair with another value.
    private static func encoding(
        of index: OrderedIndex
    ) -> (Encoding, nulls: Int, firstValue: Int64?, minimumKey: PrimaryKey) {
        var integers = true
        var references = true
        var nulls = 0
        var firstValue: Int64?
        var minimumKey = PrimaryKey.max
        index.forEach { value, key in
            switch value {
            case .null: nulls += 1
            case .int: references = false
            case .reference: integers = false
            default: (integers, references) = (false, false)
            }
            if let number = value.indexedNumber {
                if firstValue == nil { firstValue = number }
                minimumKey = min(minimumKey, key)
            }
        }
        return (integers ? .integers : references ? .references : .rows, nulls, firstValue, minimumKey)
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
            // At least a byte each 64 pairs (two widths a group of 128): a count the bytes cannot
            // hold reserves nothing. Room is reserved for at most a pair a byte, so that a damaged
            // count that passes this reserves no more than a few times the bytes.
            let pairCount = try reader.count(limit: reader.remaining * 64)
            guard let encoding = Encoding(rawValue: try reader.u8()) else {
                throw BinaryReader.Malformed(offset: reader.position - 1)
            }
            var pairs: [(Value, PrimaryKey)] = []
            pairs.reserveCapacity(min(pairCount, reader.remaining))
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
                guard nulls < pairCount else { break }
                let first = try reader.zigzag()
                let minimumKey = try reader.zigzag()
                var values: [Int64] = []
                values.reserveCapacity(min(pairCount - nulls, reader.remaining))
                var value = first
                try BitPackedGroups.read(count: pairCount - nulls, from: &reader) { _, difference in
                    value = value &+ Int64(bitPattern: difference)
                    values.append(value)
                }
                var previousKey = minimumKey
                try BitPackedGroups.read(count: values.count, from: &reader) { index, stored in
                    let base = index > 0 && values[index] == values[index - 1] ? previousKey : minimumKey
                    previousKey = base &+ Int64(bitPattern: stored)
                    let number = values[index]
                    pairs.append((encoding == .integers ? .int(number) : .reference(number), previousKey))
                }
            }
            indexes[column] = OrderedIndex(ordered: pairs)
        }
    }
}

extension Value {
    /// The number of an integer or a reference, which encodings 1 and 2 store; nil otherwise.
    fileprivate var indexedNumber: Int64? {
        switch self {
        case .int(let number), .reference(let number): number
        default: nil
        }
    }
}
