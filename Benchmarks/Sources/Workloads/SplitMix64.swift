/// The SplitMix64 generator (Steele, Lea and Flood), the fixed source of every benchmark value.
///
/// Every draw is defined here, not by the standard library's `random(in:using:)`, so that the
/// values are the same on every platform and every Swift version. `Sendable`.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The seed every reference workload uses.
    public static let referenceSeed: UInt64 = 42

    /// The generator's state; equal states produce equal sequences.
    public private(set) var state: UInt64

    /// Creates a generator. The default seed is ``referenceSeed``.
    public init(seed: UInt64 = SplitMix64.referenceSeed) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `0..<bound` (Lemire's multiply-and-reject method).
    public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold {
                product = next().multipliedFullWidth(by: bound)
            }
        }
        return product.high
    }

    /// A uniform integer in `range`.
    public mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        if width == 0 { return Int64(bitPattern: next()) }  // the whole Int64 range
        return range.lowerBound &+ Int64(bitPattern: below(width))
    }

    /// A uniform index in `0..<count`.
    public mutating func index(below count: Int) -> Int {
        Int(below(UInt64(count)))
    }

    /// A uniform `Double` in `0..<1`, with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// Shuffles `elements` in place (Fisher-Yates, drawing with ``index(below:)``).
    public mutating func shuffle<T>(_ elements: inout [T]) {
        guard elements.count > 1 else { return }
        for i in stride(from: elements.count - 1, to: 0, by: -1) {
            let j = index(below: i + 1)
            if i != j { elements.swapAt(i, j) }
        }
    }
}
