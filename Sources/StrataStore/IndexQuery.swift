/// A lookup in a column's fetch index.
public enum IndexQuery: Sendable, Hashable {
    /// Rows whose value equals the given one (`.null` finds rows with no value).
    case equal(Value)
    /// Rows whose value is one of the given ones.
    case `in`([Value])
    /// Rows whose value lies between the bounds; a `nil` bound is open. `null` is never in a range.
    case range(lower: IndexBound?, upper: IndexBound?)
}

extension IndexQuery {
    /// Whether a row whose column holds `value` is among what the query finds in a fetch index
    /// (values compare in the index's order, so numbers of different kinds compare by value).
    public func matches(_ value: Value) -> Bool {
        func same(_ a: Value, _ b: Value) -> Bool { !(a < b) && !(b < a) }
        switch self {
        case .equal(let wanted):
            return same(value, wanted)
        case .in(let wanted):
            return wanted.contains { same(value, $0) }
        case .range(let lower, let upper):
            guard !value.isNull else { return false }
            if let lower, lower.isInclusive ? value < lower.value : !(lower.value < value) { return false }
            if let upper, upper.isInclusive ? upper.value < value : !(value < upper.value) { return false }
            return true
        }
    }
}

/// One end of an ``IndexQuery/range(lower:upper:)``.
public struct IndexBound: Sendable, Hashable {
    /// The bounding value.
    public var value: Value
    /// Whether rows equal to ``value`` are included.
    public var isInclusive: Bool

    /// Creates a bound.
    public init(_ value: Value, inclusive: Bool) {
        self.value = value
        self.isInclusive = inclusive
    }
}
