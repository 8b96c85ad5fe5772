/// Unwraps optionals held in an `Any`.
enum OptionalUnwrapper {
    /// The value inside any number of optionals, or `nil`.
    static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any OptionalUnwrapping { return optional.unwrappedAny.flatMap(unwrap) }
        return value
    }
}

/// An `Optional`, seen without its type.
protocol OptionalUnwrapping {
    /// The wrapped value, or `nil`.
    var unwrappedAny: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedAny: Any? { map { $0 as Any } }
}
