/// The random choices of the workloads (which keys to read, update and delete), the same for
/// every engine.
///
/// Each choice draws from its own SplitMix64 stream, seeded with the data set's seed plus a fixed
/// stream number, so that running a subset of the workloads changes none of them. `Sendable`.
public struct WorkloadPlan: Sendable {
    /// The number of employees the plan is for.
    public let employeeCount: Int
    /// The data set's seed.
    public let seed: UInt64

    /// Creates the plan for a data set of `employeeCount` employees.
    public init(employeeCount: Int, seed: UInt64 = SplitMix64.referenceSeed) {
        self.employeeCount = employeeCount
        self.seed = seed
    }

    /// One change of W7.
    public struct SalaryChange: Sendable, Hashable {
        /// The employee's primary key.
        public var key: Int64
        /// The new salary.
        public var salary: Int64
    }

    private enum Stream: UInt64 {
        case lookups = 1, updates, deletes, concurrentReads, coldOpen
    }

    private func generator(_ stream: Stream) -> SplitMix64 {
        SplitMix64(seed: seed &+ stream.rawValue &* 0x1_0000)
    }

    /// W4: `count` employee keys in random order: shuffled copies of all keys, one after another.
    public func lookupKeys(count: Int = 100_000) -> [Int64] {
        var random = generator(.lookups)
        return Self.permutations(of: allKeys, count: count, using: &random)
    }

    /// W3: the key whose read ends a cold open.
    public func coldOpenKey() -> Int64 {
        var random = generator(.coldOpen)
        return Dataset.employeeKey(random.index(below: employeeCount))
    }

    /// W7: `employeeCount / 10` distinct employees chosen at random, in that random order, each
    /// with a new salary uniform in `30_000...200_000`.
    public func salaryChanges() -> [SalaryChange] {
        var random = generator(.updates)
        var keys = allKeys
        random.shuffle(&keys)
        return keys.prefix(max(1, employeeCount / 10)).map {
            SalaryChange(key: $0, salary: random.int64(in: DatasetGenerator.salaryRange))
        }
    }

    /// W8: half of the employees chosen at random, in ascending key order.
    public func deletedKeys() -> [Int64] {
        var random = generator(.deletes)
        var keys = allKeys
        random.shuffle(&keys)
        return keys.prefix(employeeCount / 2).sorted()
    }

    /// W8: the keys that survive ``deletedKeys()``, shuffled again: the keys the concurrent reader
    /// reads during compaction, `count` of them.
    public func concurrentReadKeys(count: Int = 100_000) -> [Int64] {
        let deleted = Set(deletedKeys())
        let survivors = allKeys.filter { !deleted.contains($0) }
        var random = generator(.concurrentReads)
        return Self.permutations(of: survivors, count: count, using: &random)
    }

    private var allKeys: [Int64] { (0..<employeeCount).map(Dataset.employeeKey) }

    private static func permutations(of keys: [Int64], count: Int, using random: inout SplitMix64) -> [Int64] {
        guard !keys.isEmpty else { return [] }
        var result: [Int64] = []
        result.reserveCapacity(count)
        var round = keys
        while result.count < count {
            random.shuffle(&round)
            result.append(contentsOf: round.prefix(count - result.count))
        }
        return result
    }
}
