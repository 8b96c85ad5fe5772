import BenchSupport
import CLMDB
import Foundation
import Workloads

/// The memory-mapped B+tree baseline: LMDB (Debian's liblmdb-dev) through its C API, the rows as
/// ``KeyValueRow`` encodes them in the environment's main database; each save is one write
/// transaction.
///
/// Settings, as LMDB's documentation (lmdb.h) gives them:
/// - the default environment flags: a read-only memory map (not `MDB_WRITEMAP`, which the
///   documentation says "may be slightly faster for DBs that fit entirely in RAM, but is slower
///   for DBs larger than RAM" and trades away protection from wild writes), readahead on
///   (`MDB_NORDAHEAD` "may help random read performance when the DB is larger than RAM", which
///   it is not here);
/// - a map size of 64 GiB, address space only (the default is 10 MiB), so that no workload
///   runs out of it;
/// - durable: the default, the data and the meta page flushed on every commit; relaxed:
///   `MDB_NOSYNC` ("a system crash may undo the final transactions");
/// - inserts of keys in ascending order use `MDB_APPEND`, documented as what "allows fast bulk
///   loading when keys are already known to be in the correct order" (W1's data set, W2's new
///   employees);
/// - read-only transactions are reset and renewed rather than made afresh for each read (W8's
///   reader), as `mdb_txn_reset` documents; W4's lookups share one read transaction, as SQLite's
///   share one read.
///
/// LMDB never shrinks its file: a delete puts the pages on its free list for later writes.
/// W8's compaction is the documented way to get a file without them, `mdb_env_copy2` with
/// `MDB_CP_COMPACT` into a new file (synced), which then replaces the old one once readers are
/// gone (``finishCompaction()``: the environment closes and reopens). Not `Sendable`: the
/// runner drives it from one thread; the concurrent reads of W8 go through a ``Reader``.
final class LMDBEngine: BenchEngine {
    static let name = "LMDB"
    static let answersPredicateQueries = false

    /// The settings above, in one line, for the JSON object.
    static let settings =
        "C API; default flags (no MDB_WRITEMAP, readahead on), map size 64 GiB; sync on commit (durable) / "
        + "MDB_NOSYNC (relaxed); MDB_APPEND for keys inserted in order; W8 compaction: mdb_env_copy2(MDB_CP_COMPACT), "
        + "then the copy replaces the file"

    /// The map size: address space, not disk.
    private static let mapSize = 64 << 30

    private let directory: URL
    private let durability: BenchDurability
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    private var storeURL: URL { directory.appendingPathComponent("db") }
    var filesURL: URL { storeURL }
    private var compactURL: URL { directory.appendingPathComponent("compact") }

    init(directory: URL, durability: BenchDurability) {
        self.directory = directory
        self.durability = durability
    }

    /// The LMDB version string, e.g. `LMDB 0.9.24: (July 24, 2019)`.
    static var version: String { String(cString: mdb_version(nil, nil, nil)) }

    fileprivate static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws {
        guard code != 0 else { return }
        throw BenchError("LMDB: \(operation()): \(String(cString: mdb_strerror(code))) (\(code))")
    }

    func open() throws {
        try FileManager.default.createDirectory(at: storeURL, withIntermediateDirectories: true)
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env), "create an environment")
        do {
            try Self.check(mdb_env_set_mapsize(env, Self.mapSize), "set the map size")
            let flags: UInt32 = durability == .durable ? 0 : UInt32(MDB_NOSYNC)
            try Self.check(mdb_env_open(env, storeURL.path, flags, 0o644), "open \(storeURL.path)")
            var txn: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, 0, &txn), "begin a transaction")
            var dbi: MDB_dbi = 0
            let opened = mdb_dbi_open(txn, nil, 0, &dbi)
            guard opened == 0 else {
                mdb_txn_abort(txn)
                try Self.check(opened, "open the main database")
                return
            }
            try Self.check(mdb_txn_commit(txn), "commit the main database's opening")
            self.dbi = dbi
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.env = env
    }

    func close() throws {
        guard let env else { return }
        self.env = nil
        mdb_env_close(env)
    }

    private var opened: OpaquePointer {
        get throws { try env.orThrow("LMDB: the environment is not open") }
    }

    /// Runs `body` in a write transaction and commits it: one save.
    private func write(_ operation: String, _ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(try opened, nil, 0, &txn), "begin a transaction to \(operation)")
        do {
            try body(txn!)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn), "commit: \(operation)")
    }

    /// Runs `body` in a read-only transaction, then ends it.
    private func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(try opened, nil, UInt32(MDB_RDONLY), &txn), "begin a read-only transaction")
        defer { mdb_txn_abort(txn) }
        return try body(txn!)
    }

    private func put(_ txn: OpaquePointer, _ key: [UInt8], _ value: [UInt8], flags: Int32 = 0) throws {
        var key = key
        var value = value
        let code = key.withUnsafeMutableBytes { key in
            value.withUnsafeMutableBytes { value in
                var k = MDB_val(mv_size: key.count, mv_data: key.baseAddress)
                var v = MDB_val(mv_size: value.count, mv_data: value.baseAddress)
                return mdb_put(txn, dbi, &k, &v, UInt32(flags))
            }
        }
        try Self.check(code, "put a row")
    }

    func insertAll(_ dataset: Dataset) throws {
        for part in dataset.saveParts {
            try write("insert the data set") { txn in
                if part.lowerBound == 0 { try putDepartments(dataset.departments, in: txn) }
                try putEmployees(dataset.employees[part], firstKey: Dataset.employeeKey(part.lowerBound), in: txn)
            }
        }
    }

    func insertDepartments(_ departments: [Department]) throws {
        try write("insert departments") { txn in try putDepartments(departments, in: txn) }
    }

    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws {
        try write("insert employees") { txn in try putEmployees(employees, firstKey: firstKey, in: txn) }
    }

    /// Departments sort first, and are only ever inserted into an empty database: appended.
    private func putDepartments(_ departments: [Department], in txn: OpaquePointer) throws {
        var key = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        for (index, department) in departments.enumerated() {
            KeyValueRow.writeKey(KeyValueRow.departmentPrefix, Dataset.departmentKey(index), into: &key)
            KeyValueRow.encode(department, into: &value)
            try put(txn, key, value, flags: MDB_APPEND)
        }
    }

    /// New employees always come after every key already there (W1, W2): appended.
    private func putEmployees(_ employees: ArraySlice<Employee>, firstKey: Int64, in txn: OpaquePointer) throws {
        var key = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        var primaryKey = firstKey
        for employee in employees {
            KeyValueRow.writeKey(KeyValueRow.employeePrefix, primaryKey, into: &key)
            KeyValueRow.encode(employee, into: &value)
            try put(txn, key, value, flags: MDB_APPEND)
            primaryKey += 1
        }
    }

    /// Runs `body` with the value of employee `key` in `txn` (in the map, not copied), or `nil`.
    fileprivate static func withEmployee<T>(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: Int64, keyBuffer: inout [UInt8],
        _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        KeyValueRow.writeKey(KeyValueRow.employeePrefix, key, into: &keyBuffer)
        var value = MDB_val()
        let code = keyBuffer.withUnsafeMutableBytes { bytes in
            var k = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            return mdb_get(txn, dbi, &k, &value)
        }
        if code == MDB_NOTFOUND { return try body(nil) }
        try check(code, "read employee \(key)")
        return try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        return try read { txn in
            try Self.withEmployee(txn, dbi, key, keyBuffer: &keyBuffer) { try $0.map(KeyValueRow.nameAndSalary) }
        }
    }

    func lookUp(_ keys: [Int64]) throws -> Int64 {
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        return try read { txn in
            var checksum: Int64 = 0
            for key in keys {
                let (name, salary) = try Self.withEmployee(txn, dbi, key, keyBuffer: &keyBuffer) { value in
                    try KeyValueRow.nameAndSalary(try value.orThrow("LMDB: employee \(key) is missing"))
                }
                checksum &+= salary &+ Int64(name.utf8.count)
            }
            return checksum
        }
    }

    /// Visits every employee's value in key order, with a cursor from the first employee key.
    private func forEachEmployee(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, dbi, &cursor), "open a cursor")
            defer { mdb_cursor_close(cursor) }
            var start = [KeyValueRow.employeePrefix]
            var key = MDB_val()
            var value = MDB_val()
            var code = start.withUnsafeMutableBytes { start in
                key = MDB_val(mv_size: start.count, mv_data: start.baseAddress)
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
            while code == 0 {
                guard key.mv_size > 0, key.mv_data.load(as: UInt8.self) == KeyValueRow.employeePrefix else { break }
                try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if code != MDB_NOTFOUND { try Self.check(code, "iterate over the employees") }
        }
    }

    func scanNotes() throws -> (count: Int, notesBytes: Int64) {
        var count = 0
        var bytes: Int64 = 0
        try forEachEmployee { value in
            bytes += Int64(try KeyValueRow.notes(value).utf8.count)
            count += 1
        }
        return (count, bytes)
    }

    func employeeCount() throws -> Int {
        var count = 0
        try forEachEmployee { _ in count += 1 }
        return count
    }

    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner] {
        throw BenchError("LMDB has no secondary index: W5 does not run on it")
    }

    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        throw BenchError("LMDB has no secondary index: W5 does not run on it")
    }

    /// Reads each row, rewrites its salary in a copy, and puts it back, in one write transaction.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws {
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        try write("update salaries") { txn in
            for change in changes {
                try Self.withEmployee(txn, dbi, change.key, keyBuffer: &keyBuffer) { row in
                    let row = try row.orThrow("LMDB: employee \(change.key) is missing")
                    value.removeAll(keepingCapacity: true)
                    value.append(contentsOf: row)
                }
                KeyValueRow.setSalary(change.salary, in: &value)
                try put(txn, keyBuffer, value)
            }
        }
    }

    func delete(_ keys: [Int64]) throws {
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        try write("delete employees") { txn in
            for key in keys {
                KeyValueRow.writeKey(KeyValueRow.employeePrefix, key, into: &keyBuffer)
                let code = keyBuffer.withUnsafeMutableBytes { bytes in
                    var k = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    return mdb_del(txn, dbi, &k, nil)
                }
                try Self.check(code, "delete employee \(key)")
            }
        }
    }

    /// A compacted copy of the environment (`MDB_CP_COMPACT`: free pages left out, pages
    /// renumbered), synced; it replaces the file in ``finishCompaction()``.
    func compact() throws -> [String: Double] {
        let env = try opened
        try? FileManager.default.removeItem(at: compactURL)
        try FileManager.default.createDirectory(at: compactURL, withIntermediateDirectories: true)
        try Self.check(mdb_env_copy2(env, compactURL.path, UInt32(MDB_CP_COMPACT)), "copy with compaction")
        try Self.fsync(compactURL.appendingPathComponent("data.mdb"))
        return [:]
    }

    /// Puts the compacted copy in place of the data file: closes the environment, renames the
    /// copy over the file, syncs the directory and opens the environment again.
    func finishCompaction() throws {
        try close()
        let copy = compactURL.appendingPathComponent("data.mdb")
        guard rename(copy.path, storeURL.appendingPathComponent("data.mdb").path) == 0 else {
            throw BenchError("LMDB: rename the compacted copy: \(String(cString: strerror(errno)))")
        }
        try Self.fsync(storeURL)
        try FileManager.default.removeItem(at: compactURL)
        try open()
    }

    private static func fsync(_ url: URL) throws {
        let descriptor = Foundation.open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw BenchError("LMDB: open \(url.path): \(String(cString: strerror(errno)))") }
        defer { Foundation.close(descriptor) }
        guard Foundation.fsync(descriptor) == 0 else {
            throw BenchError("LMDB: fsync \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// The data and lock files (every commit has already written the data file).
    func settledBytesOnDisk() throws -> Int64 {
        try DiskUsage.bytes(at: storeURL)
    }

    func storageDetails(readKey key: Int64) throws -> [String: Double] {
        [:]
    }

    func makeConcurrentReader() throws -> any ConcurrentReader {
        Reader(env: try opened, dbi: dbi)
    }

    /// Reads in a read-only transaction of its own, made at the first read, then reset after each
    /// read and renewed before the next (no allocation per read). A renewal takes the reader slot
    /// of the thread it runs on, so the reader may move to another thread between reads (W8 reads
    /// idle from one thread, then during compaction from another).
    ///
    /// `@unchecked Sendable`: the transaction and the key buffer are used by one reading thread
    /// at a time, the next starting after the last has stopped, and the transaction is ended by
    /// ``close()`` once reading has stopped (it is reset then, holding no reader slot); the engine
    /// keeps the environment open until then.
    private final class Reader: ConcurrentReader, @unchecked Sendable {
        let env: OpaquePointer
        let dbi: MDB_dbi
        var txn: OpaquePointer?
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)

        init(env: OpaquePointer, dbi: MDB_dbi) {
            self.env = env
            self.dbi = dbi
        }

        func read(_ key: Int64) throws -> Bool {
            if let txn {
                try LMDBEngine.check(mdb_txn_renew(txn), "renew the reader's transaction")
            } else {
                try LMDBEngine.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin the reader's transaction")
            }
            defer { mdb_txn_reset(txn) }
            return try LMDBEngine.withEmployee(txn!, dbi, key, keyBuffer: &keyBuffer) { value in
                guard let value else { return false }
                let (name, salary) = try KeyValueRow.nameAndSalary(value)
                return !name.isEmpty && salary > 0
            }
        }

        func close() throws {
            if let txn { mdb_txn_abort(txn) }
            txn = nil
        }
    }
}
