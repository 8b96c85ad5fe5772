import Foundation
import Testing
@testable import StrataStore

/// ``RadixOrder`` orders positions as a stable comparison sort does: by each field sorted, most
/// significant last, ties in position order, whichever bytes the digits differ in.
@Suite struct RadixOrderTests {
    /// Digits that share many values, over `bits` low bits (64: the whole range, extremes included).
    static func digits(_ count: Int, bits: UInt64, using generator: inout some RandomNumberGenerator) -> [UInt64] {
        let mask: UInt64 = bits == 64 ? .max : (1 << bits) - 1
        let pool =
            (0..<max(count / 4, 1)).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) & mask } + [
                0, mask,
            ]
        return (0..<count).map { _ in pool.randomElement(using: &generator)! }
    }

    @Test(arguments: [1, 8, 18, 40, 64])
    func ordersTwoFieldsAsAStableSort(bits: UInt64) {
        var generator = SystemRandomNumberGenerator()
        let count = 2_000
        let major = Self.digits(count, bits: 2, using: &generator)
        let minor = Self.digits(count, bits: bits, using: &generator)
        var order = RadixOrder(count: count)
        order.sort(by: minor)
        order.sort(by: major)
        let expected = (0..<count).sorted { (major[$0], minor[$0], $0) < (major[$1], minor[$1], $1) }
        #expect(order.positions == expected)
    }

    @Test func equalDigitsAndNoDigitsKeepPositionOrder() {
        var order = RadixOrder(count: 5)
        order.sort(by: [7, 7, 7, 7, 7])
        #expect(order.positions == [0, 1, 2, 3, 4])
        var empty = RadixOrder(count: 0)
        empty.sort(by: [])
        #expect(empty.positions.isEmpty)
    }
}
