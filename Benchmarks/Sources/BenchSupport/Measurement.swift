import Dispatch

/// Monotonic time, in nanoseconds.
@inlinable @inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Runs `body` once; returns its result and the wall time it took, in seconds.
@inlinable
public func measure<T>(_ body: () throws -> T) rethrows -> (result: T, seconds: Double) {
    let start = monotonicNanoseconds()
    let result = try body()
    return (result, Double(monotonicNanoseconds() - start) / 1e9)
}

extension Array where Element: BinaryInteger {
    /// The nearest-rank percentile `p` (0...1) of the elements; `nil` when empty.
    @inlinable
    public func percentile(_ p: Double) -> Element? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }
}

extension Array where Element == Double {
    /// The median of the elements; `nil` when empty.
    @inlinable
    public var median: Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
