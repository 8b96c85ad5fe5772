/// A set of an object's slots (property positions), as bits: the changed slots an object
/// tracks cost no allocation and no hashing for entities of up to 64 properties.
struct SlotSet: Sequence, Equatable, ExpressibleByArrayLiteral {
    /// Slots 0 to 63.
    private var low: UInt64 = 0
    /// Slots from 64 on, 64 per word; empty while none is set.
    private var high: [UInt64] = []

    /// An empty set.
    init() {}

    /// The set of `slots`.
    init(_ slots: some Sequence<Int>) {
        for slot in slots { insert(slot) }
    }

    /// The set of the listed slots.
    init(arrayLiteral slots: Int...) {
        self.init(slots)
    }

    /// Whether no slot is in the set.
    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    /// Whether `slot` is in the set.
    func contains(_ slot: Int) -> Bool {
        if slot < 64 { return low & (1 << UInt64(slot)) != 0 }
        let word = slot / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(slot % 64)) != 0
    }

    /// Adds `slot` to the set.
    mutating func insert(_ slot: Int) {
        precondition(slot >= 0, "slots are not negative")
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let word = slot / 64 - 1
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word + 1 - high.count)) }
        high[word] |= 1 << UInt64(slot % 64)
    }

    /// Adds every slot of `slots`.
    mutating func formUnion(_ slots: some Sequence<Int>) {
        for slot in slots { insert(slot) }
    }

    /// The set with every slot of `slots` added.
    func union(_ slots: some Sequence<Int>) -> SlotSet {
        var result = self
        result.formUnion(slots)
        return result
    }

    /// Sets with the same slots are equal, however many empty words they keep.
    static func == (lhs: SlotSet, rhs: SlotSet) -> Bool {
        guard lhs.low == rhs.low else { return false }
        let count = Swift.max(lhs.high.count, rhs.high.count)
        return (0..<count).allSatisfy {
            (lhs.high.indices.contains($0) ? lhs.high[$0] : 0) == (rhs.high.indices.contains($0) ? rhs.high[$0] : 0)
        }
    }

    /// The slots in ascending order.
    func makeIterator() -> Iterator {
        Iterator(set: self)
    }

    /// Iterates the slots of a set in ascending order.
    struct Iterator: IteratorProtocol {
        private let set: SlotSet
        /// The index of the word being read: 0 for ``SlotSet/low``, then ``SlotSet/high``'s.
        private var word = 0
        /// The bits of that word not returned yet.
        private var remaining: UInt64

        fileprivate init(set: SlotSet) {
            self.set = set
            remaining = set.low
        }

        /// The next slot, or `nil` after the last.
        mutating func next() -> Int? {
            while remaining == 0 {
                guard word < set.high.count else { return nil }
                remaining = set.high[word]
                word += 1
            }
            let bit = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            return word * 64 + bit
        }
    }
}
