import BenchSupport
import Foundation
import Workloads

/// The engines strata-bench runs: Strata, and the baselines it is measured against (`--baselines`).
enum StoreEngineID: String, BenchEngineID {
    case strata = "Strata"
    /// SQLite through GRDB: the baseline of the plain figure ids (`W1`).
    case sqlite = "SQLite"
    /// RocksDB through its C API: the reference log-structured (LSM) engine (`W1.rocksdb`).
    case rocksdb = "RocksDB"
    /// LMDB through its C API: the reference memory-mapped B+tree, for reads (`W4.lmdb`).
    case lmdb = "LMDB"

    /// The engines `--baselines` may name.
    static let baselines: [StoreEngineID] = [.sqlite, .rocksdb, .lmdb]
}

/// Every engine's rounds of strata-bench's figures.
typealias BenchRounds = ComparedRounds<Metric, StoreEngineID>

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
    /// Whether the engine answers W5's queries (see the default in the extension).
    static var answersPredicateQueries: Bool { get }
    /// W2: inserts `employees` in one save, under the keys from `firstKey` on.
    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws
    /// W7: changes the salary of each employee in `changes`, in one save.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws
    /// W8: deletes the employees under `keys`, in one save.
    func delete(_ keys: [Int64]) throws
    /// W8: compacts until the space of deleted rows is reclaimed; returns the engine's own figures.
    /// Runs while a ``ConcurrentReader`` reads.
    func compact() throws -> [String: Double]
    /// W8: what compaction must do once no reader is left (LMDB: put the compacted copy in place
    /// of the file, which needs the environment closed). Timed with ``compact()``. Nothing by
    /// default.
    func finishCompaction() throws
    /// The directory holding the store's files (W10's bytes by kind of file).
    var filesURL: URL { get }
    /// The bytes the store's files take, once settled (SQLite: after a WAL checkpoint).
    func settledBytesOnDisk() throws -> Int64
    /// A reader for another thread, over the open store.
    func makeConcurrentReader() throws -> any ConcurrentReader
    /// Figures only this engine has, taken after W1 (Strata: object-index bytes per object,
    /// compression ratio, open time without a checkpoint); reading `key` ends the open.
    func storageDetails(readKey key: Int64) throws -> [String: Double]
}

extension BenchEngine {
    func finishCompaction() throws {}

    /// Whether the engine answers W5's queries (`salary > x AND active`, by salary): an engine
    /// with a secondary index on salary. The key-value baselines have none, and W5 skips them.
    static var answersPredicateQueries: Bool { true }
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

    /// The bytes of the regular files under `directory`, by kind: a file in a subdirectory
    /// counts under the subdirectory's name (`segments/`), one at the top under its extension
    /// (`*.sst`) or, without one, its name up to a digit or `-` (`MANIFEST`, `bench.sqlite-wal`
    /// under `*.sqlite-wal`).
    static func bytesByKind(at directory: URL) throws -> [String: Int64] {
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(atPath: directory.path) else { return [:] }
        var kinds: [String: Int64] = [:]
        for case let relative as String in enumerator {
            let attributes = try manager.attributesOfItem(atPath: directory.appendingPathComponent(relative).path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            let components = relative.split(separator: "/")
            let kind: String
            if components.count > 1 {
                kind = components[0] + "/"
            } else if let dot = relative.lastIndex(of: ".") {
                kind = "*" + relative[dot...]
            } else {
                kind = String(relative.prefix { !$0.isNumber && $0 != "-" })
            }
            kinds[kind, default: 0] += (attributes[.size] as? NSNumber)?.int64Value ?? 0
        }
        return kinds
    }
}
