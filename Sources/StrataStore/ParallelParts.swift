import Dispatch
import Foundation
import StrataSynchronization
import Synchronization

/// Work on a large range cut into contiguous parts that run on the machine's cores at once:
/// encoding and compressing the rows of a bulk commit, converting a batch insert's objects.
package enum ParallelParts {
    /// The parts `0..<count` is cut into: at most `cores` (by default one per active core), each
    /// at least `minimumPerPart` long (a single part, `0..<count`, when the range is too short
    /// to share), of lengths differing by one at most.
    package static func ranges(count: Int, minimumPerPart: Int, cores: Int = Self.cores) -> [Range<Int>] {
        let parts = max(1, min(cores, count / max(minimumPerPart, 1)))
        return (0..<parts).map { part in (count * part / parts)..<(count * (part + 1) / parts) }
    }

    /// The fewest rows one thread makes or encodes when the rows of a bulk commit are shared
    /// out: a commit of fewer than twice as many rows is made on the committing thread alone.
    package static let rowsPerPart = 4096

    /// The active cores, read once: Foundation reads the process's CPU quota from its files at
    /// every call.
    package static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// Calls `body` on each part of `0..<count` (``ranges(count:minimumPerPart:cores:)``), the
    /// parts at once on the cores (one part runs on the calling thread), and returns the results
    /// in the order of the parts.
    package static func map<T: Sendable>(
        count: Int, minimumPerPart: Int, cores: Int = Self.cores, _ body: @Sendable (Range<Int>) -> T
    ) -> [T] {
        map(ranges(count: count, minimumPerPart: minimumPerPart, cores: cores), body)
    }

    /// Calls `body` on each of `ranges` (made by ``ranges(count:minimumPerPart:cores:)``) at once
    /// on the cores, and returns the results in their order.
    package static func map<T: Sendable>(_ ranges: [Range<Int>], _ body: @Sendable (Range<Int>) -> T) -> [T] {
        guard ranges.count > 1 else { return ranges.map(body) }
        let results = Lock([T?](repeating: nil, count: ranges.count))
        DispatchQueue.concurrentPerform(iterations: ranges.count) { part in
            let result = body(ranges[part])
            results.withLock { $0[part] = result }
        }
        return results.withLock { $0.map { $0! } }
    }
}

extension ParallelParts {
    /// A value the parts read at once that is not `Sendable` (a request's dictionaries of `Any`,
    /// a save's managed objects): whoever shares it vouches that nothing changes it while the
    /// parts run, and that each part reads only its own elements.
    package struct ReadOnly<Value>: @unchecked Sendable {
        /// The value.
        package let value: Value

        /// Shares `value` with the parts.
        package init(_ value: Value) {
            self.value = value
        }
    }
}
