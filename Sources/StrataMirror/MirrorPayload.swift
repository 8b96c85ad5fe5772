import Foundation
import Strata
import StrataStore

/// The shared log's encoding of a transaction: its operations as JSON, every value tagged with
/// its type so that it decodes to the same engine value on every instance.
struct MirrorPayload: Codable, Sendable {
    /// One operation: `kind` is `i` (insert), `u` (update) or `d` (delete; with the row it
    /// deleted for a join row, so that instances holding the pair under another key delete it too).
    struct Operation: Codable, Sendable {
        var kind: String
        var entity: Int
        var key: Int64
        var row: [TaggedValue]?
        var changed: [Int]?
    }

    var operations: [Operation]

    /// Encodes `transaction`'s operations, each delete with its row in `deletedRows` if there.
    init(_ transaction: StrataStore.Transaction, deletedRows: [ObjectKey: Row] = [:]) {
        operations = transaction.operations.map { operation in
            switch operation {
            case .insert(let entity, let key, let row):
                return Operation(kind: "i", entity: entity, key: key, row: row.values.map(TaggedValue.init))
            case .update(let entity, let key, let row, let changed):
                return Operation(
                    kind: "u", entity: entity, key: key, row: row.values.map(TaggedValue.init), changed: changed)
            case .delete(let entity, let key):
                return Operation(
                    kind: "d", entity: entity, key: key,
                    row: deletedRows[ObjectKey(entity: entity, key: key)]?.values.map(TaggedValue.init))
            }
        }
    }

    /// The rows the deletes carry, by object.
    func deletedRows() -> [ObjectKey: Row] {
        var rows: [ObjectKey: Row] = [:]
        for operation in operations where operation.kind == "d" {
            if let values = operation.row {
                rows[ObjectKey(entity: operation.entity, key: operation.key)] = Row(values.map(\.value))
            }
        }
        return rows
    }

    /// The encoded bytes.
    func encoded() throws -> Data { try JSONEncoder().encode(self) }

    /// Decodes `data`.
    ///
    /// - Throws: `DecodingError` when `data` is not a payload.
    static func decode(_ data: Data) throws -> MirrorPayload {
        try JSONDecoder().decode(MirrorPayload.self, from: data)
    }

    /// The engine operations.
    ///
    /// - Throws: ``MirrorError`` when an operation is malformed.
    func engineOperations() throws -> [StrataStore.Operation] {
        try operations.map { operation in
            switch operation.kind {
            case "i": return .insert(entity: operation.entity, key: operation.key, row: try Self.row(operation))
            case "u":
                return .update(
                    entity: operation.entity, key: operation.key, row: try Self.row(operation),
                    changedColumns: operation.changed ?? [])
            case "d": return .delete(entity: operation.entity, key: operation.key)
            default: throw MirrorError.malformedPayload("unknown operation kind \(operation.kind)")
            }
        }
    }

    private static func row(_ operation: Operation) throws -> Row {
        guard let values = operation.row else {
            throw MirrorError.malformedPayload("an insert or update without a row")
        }
        return Row(values.map(\.value))
    }
}

/// An engine value with its type, as JSON: `{"t": "i", "v": 42}`.
struct TaggedValue: Codable, Sendable {
    var value: Value

    init(_ value: Value) { self.value = value }

    private enum CodingKeys: String, CodingKey { case t, v }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch value {
        case .null: try container.encode("n", forKey: .t)
        case .int(let x):
            try container.encode("i", forKey: .t)
            try container.encode(x, forKey: .v)
        case .float(let x):
            try container.encode("f", forKey: .t)
            try container.encode(x.bitPattern, forKey: .v)
        case .double(let x):
            try container.encode("d", forKey: .t)
            try container.encode(x.bitPattern, forKey: .v)
        case .decimal(let x):
            try container.encode("m", forKey: .t)
            try container.encode(x.description, forKey: .v)
        case .bool(let x):
            try container.encode("b", forKey: .t)
            try container.encode(x, forKey: .v)
        case .string(let x):
            try container.encode("s", forKey: .t)
            try container.encode(x, forKey: .v)
        case .date(let x):
            try container.encode("t", forKey: .t)
            try container.encode(x.timeIntervalSinceReferenceDate.bitPattern, forKey: .v)
        case .data(let x):
            try container.encode("x", forKey: .t)
            try container.encode(x, forKey: .v)
        case .uuid(let x):
            try container.encode("u", forKey: .t)
            try container.encode(x, forKey: .v)
        case .uri(let x):
            try container.encode("l", forKey: .t)
            try container.encode(x.absoluteString, forKey: .v)
        case .reference(let x):
            try container.encode("r", forKey: .t)
            try container.encode(x, forKey: .v)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let tag = try container.decode(String.self, forKey: .t)
        switch tag {
        case "n": value = .null
        case "i": value = .int(try container.decode(Int64.self, forKey: .v))
        case "f": value = .float(Float(bitPattern: try container.decode(UInt32.self, forKey: .v)))
        case "d": value = .double(Double(bitPattern: try container.decode(UInt64.self, forKey: .v)))
        case "m":
            let text = try container.decode(String.self, forKey: .v)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .v, in: container, debugDescription: "not a decimal: \(text)")
            }
            value = .decimal(decimal)
        case "b": value = .bool(try container.decode(Bool.self, forKey: .v))
        case "s": value = .string(try container.decode(String.self, forKey: .v))
        case "t":
            value = .date(
                Date(timeIntervalSinceReferenceDate: Double(bitPattern: try container.decode(UInt64.self, forKey: .v))))
        case "x": value = .data(try container.decode(Data.self, forKey: .v))
        case "u": value = .uuid(try container.decode(UUID.self, forKey: .v))
        case "l":
            let text = try container.decode(String.self, forKey: .v)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .v, in: container, debugDescription: "not a URL: \(text)")
            }
            value = .uri(url)
        case "r": value = .reference(try container.decode(Int64.self, forKey: .v))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .t, in: container, debugDescription: "unknown value tag \(tag)")
        }
    }
}
