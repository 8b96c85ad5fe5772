import Foundation

/// One column value of a row, as the store keeps it.
///
/// Integer columns of every width hold ``int(_:)``; to-one reference columns hold
/// ``reference(_:)`` with the primary key of the target row. `Value` is `Sendable`.
public enum Value: Sendable, Hashable {
    /// No value (SQL `NULL`, Core Data `nil`).
    case null
    /// A signed integer, for `int16`, `int32` and `int64` columns.
    case int(Int64)
    /// A single-precision float.
    case float(Float)
    /// A double-precision float.
    case double(Double)
    /// A decimal number.
    case decimal(Decimal)
    /// A Boolean.
    case bool(Bool)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// Raw bytes, for `binary` and `transformable` columns.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URI.
    case uri(URL)
    /// The primary key of the row a to-one reference points at.
    case reference(Int64)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension Value: Comparable {
    /// The order fetch indexes keep: `null` first, then values of one kind by their natural order.
    ///
    /// Numbers of different kinds compare by numeric value; otherwise values of different kinds
    /// compare by kind, which never happens within one column.
    public static func < (lhs: Value, rhs: Value) -> Bool {
        // Nested switches, not a switch over a tuple: the tuple would copy both payloads.
        switch lhs {
        case .int(let a):
            if case .int(let b) = rhs { return a < b }
        case .reference(let a):
            if case .reference(let b) = rhs { return a < b }
        case .double(let a):
            if case .double(let b) = rhs { return a < b }
        case .float(let a):
            if case .float(let b) = rhs { return a < b }
        case .string(let a):
            if case .string(let b) = rhs { return a < b }
        case .date(let a):
            if case .date(let b) = rhs { return a < b }
        case .bool(let a):
            if case .bool(let b) = rhs { return !a && b }
        case .decimal(let a):
            if case .decimal(let b) = rhs { return a < b }
        case .uuid(let a):
            if case .uuid(let b) = rhs { return a.uuidString < b.uuidString }
        case .uri(let a):
            if case .uri(let b) = rhs { return a.absoluteString < b.absoluteString }
        case .data(let a):
            if case .data(let b) = rhs { return a.lexicographicallyPrecedes(b) }
        case .null:
            break
        }
        if let a = lhs.numericValue, let b = rhs.numericValue { return a < b }
        return lhs.kindRank < rhs.kindRank
    }

    /// The value as a `Double` when it is a number.
    var numericValue: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .double(let v): return v
        case .float(let v): return Double(v)
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .float, .double, .decimal: return 2
        case .reference: return 3
        case .string: return 4
        case .date: return 5
        case .data: return 6
        case .uuid: return 7
        case .uri: return 8
        }
    }
}

extension Value: CustomStringConvertible {
    /// A short human-readable rendering, used by the CLI and in error messages.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .int(let v): return String(v)
        case .float(let v): return String(v)
        case .double(let v): return String(v)
        case .decimal(let v): return v.description
        case .bool(let v): return v ? "true" : "false"
        case .string(let v): return String(reflecting: v)
        case .date(let v): return v.formatted(.iso8601)
        case .data(let v): return "<\(v.count) bytes>"
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        case .reference(let v): return "->\(v)"
        }
    }
}
