import Foundation
import Workloads

/// When a save counts as done, as WORKLOADS.md defines it.
enum BenchDurability: String, Sendable {
    /// Every save is on stable storage when it returns.
    case durable
    /// No fsync on save.
    case relaxed
}

/// One storage engine under test, driven by ``WorkloadRunner``.
///
/// Each call is one unit the runner times; an engine does its work the idiomatic fast way for
/// that engine. Not `Sendable`: the runner drives an engine from one thread; the concurrent reads
/// of W8 go through a ``ConcurrentReader``.
protocol BenchEngine: AnyObject {
    /// The engine's name in the report.
    static var name: String { get }

    /// Creates the engine for a store at `directory`, which does not exist yet.
    init(directory: URL, durability: BenchDurability)

    /// Opens the store, creating it (with its schema and indexes) when missing.
    func open() throws
    /// Closes the store.
    func close() throws

    /// W1: inserts every department and employee of `dataset` in one save.
    func insertAll(_ dataset: Dataset) throws
    /// Inserts `departments` in one save (the setup of W2).
    func insertDepartments(_ departments: [Department]) throws
    /// W2: inserts `employees` in one save, under the keys from `firstKey` on.
    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws
    /// Reads one employee's name and salary (W3's first read).
    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)?
    /// W4: reads name and salary of each key; returns the sum of salaries and name lengths.
    func lookUp(_ keys: [Int64]) throws -> Int64
    /// W6: reads every employee and its notes; returns the count and the sum of notes lengths.
    func scanNotes() throws -> (count: Int, notesBytes: Int64)
    /// W7: changes the salary of each employee in `changes`, in one save.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws
    /// W8: deletes the employees under `keys`, in one save.
    func delete(_ keys: [Int64]) throws
    /// W8: compacts until the space of deleted rows is reclaimed; returns the engine's own figures.
    func compact() throws -> [String: Double]
    /// The number of live employees (a check, not timed).
    func employeeCount() throws -> Int
    /// The bytes the store's files take, once settled (SQLite: after a WAL checkpoint).
    func settledBytesOnDisk() throws -> Int64
    /// A reader for another thread, over the open store.
    func makeConcurrentReader() throws -> any ConcurrentReader
}

/// Reads employees by key from a thread of its own while the engine's thread works.
protocol ConcurrentReader: Sendable {
    /// Reads the name and salary of `key`; returns whether the row exists.
    func read(_ key: Int64) throws -> Bool
    /// Releases what the reader holds.
    func close() throws
}

/// An error of the benchmark itself: a setting not in force, engines that disagree.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum DiskUsage {
    /// The sum of the sizes of the regular files under `url` (or of `url` itself), 0 if missing.
    static func bytes(at url: URL) throws -> Int64 {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return 0 }
        guard isDirectory.boolValue else {
            return (try manager.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
        }
        var total: Int64 = 0
        guard let enumerator = manager.enumerator(atPath: url.path) else { return 0 }
        for case let relative as String in enumerator {
            let attributes = try manager.attributesOfItem(atPath: url.appendingPathComponent(relative).path)
            if attributes[.type] as? FileAttributeType == .typeRegular {
                total += (attributes[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return total
    }
}
