/// Casts of the values relationship slots hold, whose type is known: an ID (a final class), a
/// set of IDs, or `nil`.
///
/// `as? T` from `Any` calls the runtime's dynamic cast, 250-360 instructions for an ID or a set
/// of IDs (callgrind of strata-graph-bench W1: about 900 instructions for each relationship an
/// employee is given). A value of exactly `T` is taken with one comparison of its type's
/// metadata instead; any other value still goes through `as?`, so the result is the cast's.
enum SlotValueCast {
    /// `value` as a `T`, as `value as? T` gives it.
    @inline(__always)
    static func cast<T>(_ value: Any?, to type: T.Type) -> T? {
        guard let value else { return nil }
        if let exact = exactly(value, as: type) { return exact }
        return value as? T
    }

    /// `value` when its dynamic type is exactly `T`, else `nil`.
    @inline(__always)
    private static func exactly<T>(_ value: Any, as _: T.Type) -> T? {
        func open<Held>(_ held: Held) -> T? { Held.self == T.self ? unsafeBitCast(held, to: T.self) : nil }
        return _openExistential(value, do: open)
    }
}
