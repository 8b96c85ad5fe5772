/// An order of positions `0..<count` built by stable least-significant-digit radix sorts: sort
/// by the least significant field first, then by each more significant one, and the positions
/// end in the order of all the fields, ties kept in position order.
///
/// Each ``sort(by:)`` costs one pass over the positions per byte in which the digits differ
/// (none for a field every position shares), where a comparison sort costs about log2(count)
/// comparisons per position: a bulk insert's fetch-index changes are ordered this way.
struct RadixOrder {
    /// The positions, in the order sorted so far.
    private(set) var positions: [Int]

    /// Creates the order of `count` positions, in position order.
    init(count: Int) {
        positions = Array(0..<count)
    }

    /// Stable-sorts the positions by `digits[position]`, as unsigned integers.
    ///
    /// - Precondition: `digits` has one entry per position.
    mutating func sort(by digits: [UInt64]) {
        precondition(digits.count == positions.count, "one digit a position")
        guard let first = digits.first else { return }
        // The bits in which some digit differs from the first: only their bytes need a pass.
        var differing: UInt64 = 0
        for digit in digits { differing |= digit ^ first }
        var scratch = [Int](repeating: 0, count: positions.count)
        digits.withUnsafeBufferPointer { digits in
            for shift in stride(from: 0, to: 64, by: 8) where (differing >> UInt64(shift)) & 0xFF != 0 {
                var counts = [Int](repeating: 0, count: 256)
                positions.withUnsafeBufferPointer { positions in
                    counts.withUnsafeMutableBufferPointer { counts in
                        for position in positions { counts[Int((digits[position] >> UInt64(shift)) & 0xFF)] += 1 }
                        var start = 0
                        for byte in 0..<256 {
                            let count = counts[byte]
                            counts[byte] = start
                            start += count
                        }
                        scratch.withUnsafeMutableBufferPointer { scratch in
                            for position in positions {
                                let byte = Int((digits[position] >> UInt64(shift)) & 0xFF)
                                scratch[counts[byte]] = position
                                counts[byte] += 1
                            }
                        }
                    }
                }
                swap(&positions, &scratch)
            }
        }
    }
}
