/// Unwraps optionals held in an `Any`.
enum OptionalUnwrapper {
    /// The value inside any number of optionals, or `nil`.
    static func unwrap(_ value: Any) -> Any? {
        // Only an optional is cast: a failed protocol cast looks the conformance up (thousands of
        // instructions), a look at the value's type costs a few.
        if isOptional(value), let optional = value as? any OptionalUnwrapping {
            return optional.unwrappedAny.flatMap(unwrap)
        }
        return value
    }

    /// Whether the dynamic type of `value` is an `Optional`.
    static func isOptional(_ value: Any) -> Bool {
        func open<T>(_: T) -> Bool { _isOptional(T.self) }
        return _openExistential(value, do: open)
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
