/// An error of the benchmark itself: a setting not in force, engines that disagree.
public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Optional {
    /// The wrapped value, or a ``BenchError`` with `message` when `nil`.
    public func orThrow(_ message: @autoclosure () -> String) throws -> Wrapped {
        guard let self else { throw BenchError(message()) }
        return self
    }
}
