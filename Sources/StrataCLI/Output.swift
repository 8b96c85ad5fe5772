import Foundation
import StrataStore

/// Writing to standard output and standard error, as text or JSON.
enum Output {
    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes `text` to standard error without a newline (for a progress line).
    static func status(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Prints `value` as JSON on standard output: indented, or on one line when `pretty` is false.
    ///
    /// Object keys are sorted, so the output is stable. Non-finite floats are written as the
    /// strings `"inf"`, `"-inf"` and `"nan"`.
    static func json(_ value: some Encodable, pretty: Bool = true) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A timestamp in ISO 8601 with fractional seconds, in UTC.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// A column value as JSON: numbers for integers, floats and references (the target's key),
/// strings for decimals (exact), dates (ISO 8601), UUIDs and URIs, base64 for data, `null` for nil.
struct JSONValue: Encodable {
    /// The value encoded.
    var value: Value

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .null: try container.encodeNil()
        case .int(let v), .reference(let v): try container.encode(v)
        case .float(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .decimal(let v): try container.encode(v.description)
        case .bool(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .date(let v): try container.encode(Output.timestamp(v))
        case .data(let v): try container.encode(v.base64EncodedString())
        case .uuid(let v): try container.encode(v.uuidString)
        case .uri(let v): try container.encode(v.absoluteString)
        }
    }
}

/// Some columns of a row as one JSON object keyed by column name.
struct JSONRow: Encodable {
    /// The column names and values, in order.
    var columns: [(name: String, value: Value)]

    /// The columns of `row` at `positions` (every column when `nil`), named by `entity`.
    init(_ row: Row, of entity: EntitySchema, positions: [Int]? = nil) {
        columns = (positions ?? Array(row.values.indices)).map { (entity.columns[$0].name, row[$0]) }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for column in columns {
            try container.encode(JSONValue(value: column.value), forKey: Key(stringValue: column.name))
        }
    }

    /// The columns as `name=value` pairs separated by commas, for text output.
    var text: String {
        columns.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")
    }
}
