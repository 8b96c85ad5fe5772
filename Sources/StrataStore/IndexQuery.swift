/// A lookup in a column's fetch index.
public enum IndexQuery: Sendable, Hashable {
    /// Rows whose value equals the given one (`.null` finds rows with no value).
    case equal(Value)
    /// Rows whose value is one of the given ones.
    case `in`([Value])
    /// Rows whose value lies between the bounds; a `nil` bound is open. `null` is never in a range.
    case range(lower: IndexBound?, upper: IndexBound?)
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
