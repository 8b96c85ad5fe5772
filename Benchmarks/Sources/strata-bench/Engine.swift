import BenchSupport
import Foundation
import Workloads

/// One storage engine under test, driven by ``WorkloadRunner``: the calls every engine has
/// (``WorkloadEngine``, with employees named by primary key), and those of W2, W7 and W8.
///
/// Each call is one unit the runner times; an engine does its work the idiomatic fast way for
/// that engine. Not `Sendable`: the runner drives an engine from one thread; the concurrent reads
/// of W8 go through a ``ConcurrentReader``.
protocol BenchEngine: WorkloadEngine where Reference == Int64 {
    /// Creates the engine for a store at `directory`, which does not exist yet.
    init(directory: URL, durability: BenchDurability)

    /// Inserts `departments` in one save (the setup of W2).
    func insertDepartments(_ departments: [Department]) throws
    /// W2: inserts `employees` in one save, under the keys from `firstKey` on.
    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws
    /// W7: changes the salary of each employee in `changes`, in one save.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws
    /// W8: deletes the employees under `keys`, in one save.
    func delete(_ keys: [Int64]) throws
    /// W8: compacts until the space of deleted rows is reclaimed; returns the engine's own figures.
    func compact() throws -> [String: Double]
    /// The bytes the store's files take, once settled (SQLite: after a WAL checkpoint).
    func settledBytesOnDisk() throws -> Int64
    /// A reader for another thread, over the open store.
    func makeConcurrentReader() throws -> any ConcurrentReader
    /// Figures only this engine has, taken after W1 (Strata: object-index bytes per object,
    /// compression ratio, open time without a checkpoint); reading `key` ends the open.
    func storageDetails(readKey key: Int64) throws -> [String: Double]
}

/// Reads employees by key from a thread of its own while the engine's thread works.
protocol ConcurrentReader: Sendable {
    /// Reads the name and salary of `key`; returns whether the row exists.
    func read(_ key: Int64) throws -> Bool
    /// Releases what the reader holds.
    func close() throws
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
