import Dispatch
import Foundation
import Workloads

/// When a save counts as done, as WORKLOADS.md defines it.
enum GraphDurability: String, Sendable, CaseIterable {
    /// Every save is on stable storage when it returns (Strata `.durable`, SQLite `synchronous=FULL`).
    case durable
    /// No fsync on save (Strata `.relaxed`, SQLite `synchronous=OFF`).
    case relaxed
}

/// How the Strata engine reads and writes properties.
enum GraphAccess: String, Sendable, CaseIterable {
    /// The typed `@Managed` properties of the subclasses (the default, what apps write).
    case typed
    /// Key-value coding: `value(forKey:)` and `setValue(_:forKey:)`, to measure what `@Managed` adds.
    case kvc
}

/// One record layer under test, driven by ``GraphRunner``: Strata's object graph (contexts and
/// typed managed objects) or GRDB records over SQLite.
///
/// Each call is one unit the runner times, except those documented as untimed. Not `Sendable`:
/// the runner drives an engine from one thread.
protocol GraphEngine: AnyObject {
    /// How the engine names one employee: an object ID for Strata, the primary key for SQLite.
    associatedtype Reference

    /// The engine's name in the report.
    static var name: String { get }

    /// Creates the engine for a store at `directory`, which does not exist yet. `access` only
    /// concerns Strata.
    init(directory: URL, durability: GraphDurability, access: GraphAccess)

    /// Opens the store, creating it (with its schema and indexes) when missing.
    func open() throws
    /// Closes the store.
    func close() throws

    /// W1: creates every department and employee of `dataset` as objects/records, relates each
    /// employee to its department, and saves once.
    func insertAll(_ dataset: Dataset) throws
    /// Untimed, after W1: what the engine keeps to find employees again after a reopen (Strata:
    /// the URI of each object ID, as an app archives them).
    func didInsertAll() throws

    /// Untimed check: the number of employees, through a count request (Strata: `count(for:)`).
    func employeeCount() throws -> Int
    /// Untimed checks: the number of employees of the first department (through the
    /// relationship), and the sum of all salaries.
    func census() throws -> (firstDepartmentEmployees: Int, salarySum: Int64)

    /// Reads one employee's name and salary by key (W3's first read; W7's read-back), in a new
    /// context for Strata.
    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)?

    /// Untimed: the references of `keys` on the open store (Strata: IDs from the archived URIs).
    func references(for keys: [Int64]) throws -> [Reference]
    /// W4: reads name and salary of each employee; returns the sum of salaries and name lengths.
    func lookUp(_ references: [Reference]) throws -> Int64
    /// W6: fetches every employee and reads its notes; returns the count and notes bytes.
    func scanNotes() throws -> (count: Int, notesBytes: Int64)
    /// W7: fetches each employee by reference, gives it its new salary, and saves once.
    func updateSalaries(_ references: [Reference], salaries: [Int64]) throws
}

/// An error of the benchmark itself: a setting not in force, engines that disagree.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Optional {
    func orThrow(_ message: @autoclosure () -> String) throws -> Wrapped {
        guard let self else { throw BenchError(message()) }
        return self
    }
}

/// Monotonic time, in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Runs `body` once; returns its result and the wall time it took, in seconds.
func measure<T>(_ body: () throws -> T) rethrows -> (result: T, seconds: Double) {
    let start = monotonicNanoseconds()
    let result = try body()
    return (result, Double(monotonicNanoseconds() - start) / 1e9)
}

extension Array where Element == Double {
    /// The median of the elements; `nil` when empty.
    var median: Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
