import BenchSupport
import CRocksDB
import Foundation
import Workloads

/// The log-structured baseline: RocksDB (Debian's librocksdb-dev) through its C API, one column
/// family holding the rows as ``KeyValueRow`` encodes them; each save is one `WriteBatch`.
///
/// Settings, as RocksDB's documentation recommends them for a general workload (none is tuned to
/// a workload of this benchmark):
/// - `IncreaseParallelism(cores)` and `OptimizeLevelStyleCompaction()` (memtable budget 512 MiB),
///   the two calls RocksDB's `examples/simple_example.cc` starts with ("the easiest way to get
///   RocksDB to perform well");
/// - from the wiki's "Setup Options and Basic Tuning": a block-based table with 16 KiB blocks, a
///   full bloom filter of 10 bits per key, index and filter blocks in the block cache with those of
///   level 0 pinned, `format_version` 5, `level_compaction_dynamic_level_bytes`, `bytes_per_sync`
///   1 MiB, and LZ4 compression with ZSTD at the bottommost level (LZ4 on every level, replacing
///   `OptimizeLevelStyleCompaction`'s list that leaves levels 0 and 1 uncompressed: the wiki's
///   compression advice is the later and more specific one);
/// - an LRU block cache of 256 MiB, Strata's default cache size, made afresh at each open;
/// - automatic compactions off, as strata-bench holds Strata's background compaction back: with
///   them on, the flush before W8 starts one at once (OptimizeLevelStyleCompaction compacts at 2
///   level-0 files) and W8's timed `CompactRange` finds the work done or half done. No other
///   workload here fills a memtable (128 MiB) except W1 at a million rows;
/// - durable: `WriteOptions.sync = true` (write-ahead log on, synced on each write); relaxed:
///   `sync = false`, the log still written.
///
/// RocksDB's own diagnostic log (`LOG`) goes to a directory beside the store, so that the store's
/// directory holds only what it needs to reopen. Not `Sendable`: the runner drives it from one
/// thread; the concurrent reads of W8 go through a ``Reader``.
final class RocksDBEngine: BenchEngine {
    static let name = "RocksDB"
    static let answersPredicateQueries = false

    /// The settings above, in one line, for the JSON object.
    static let settings =
        "C API; IncreaseParallelism(cores), OptimizeLevelStyleCompaction(512 MiB); block-based table, 16 KiB blocks, "
        + "bloom filter 10 bits/key (full), index and filter blocks cached, L0 ones pinned, format_version 5, "
        + "LRU block cache 256 MiB; level_compaction_dynamic_level_bytes, bytes_per_sync 1 MiB; LZ4, ZSTD bottommost; "
        + "automatic compactions off (W8 compacts with CompactRange); "
        + "WriteOptions.sync=true (durable) / false (relaxed), WAL on"

    private let directory: URL
    private let durability: BenchDurability
    private var handles: Handles?

    private var storeURL: URL { directory.appendingPathComponent("db") }
    var filesURL: URL { storeURL }
    private var logURL: URL { directory.appendingPathComponent("log") }

    init(directory: URL, durability: BenchDurability) {
        self.directory = directory
        self.durability = durability
    }

    /// What an open database holds: the database and the options it was opened with, all
    /// destroyed on close (the block cache too, so that each open starts cold).
    private struct Handles {
        var db: OpaquePointer
        var options: OpaquePointer
        var table: OpaquePointer
        var cache: OpaquePointer
        var write: OpaquePointer
        var read: OpaquePointer
    }

    private var opened: Handles {
        get throws { try handles.orThrow("RocksDB: the database is not open") }
    }

    func open() throws {
        try FileManager.default.createDirectory(at: logURL, withIntermediateDirectories: true)
        let options = rocksdb_options_create()!
        rocksdb_options_set_create_if_missing(options, 1)
        rocksdb_options_increase_parallelism(options, Int32(ProcessInfo.processInfo.activeProcessorCount))
        rocksdb_options_optimize_level_style_compaction(options, 512 << 20)
        var compression = [Int32](repeating: Int32(rocksdb_lz4_compression), count: 7)
        rocksdb_options_set_compression_per_level(options, &compression, compression.count)
        rocksdb_options_set_compression(options, Int32(rocksdb_lz4_compression))
        rocksdb_options_set_bottommost_compression(options, Int32(rocksdb_zstd_compression))
        rocksdb_options_set_level_compaction_dynamic_level_bytes(options, 1)
        rocksdb_options_set_bytes_per_sync(options, 1 << 20)
        rocksdb_options_set_db_log_dir(options, logURL.path)
        rocksdb_options_set_disable_auto_compactions(options, 1)

        let table = rocksdb_block_based_options_create()!
        rocksdb_block_based_options_set_block_size(table, 16 << 10)
        let filter = rocksdb_filterpolicy_create_bloom_full(10)!
        rocksdb_block_based_options_set_filter_policy(table, filter)
        let cache = rocksdb_cache_create_lru(256 << 20)!
        rocksdb_block_based_options_set_block_cache(table, cache)
        rocksdb_block_based_options_set_cache_index_and_filter_blocks(table, 1)
        rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(table, 1)
        rocksdb_block_based_options_set_format_version(table, 5)
        rocksdb_options_set_block_based_table_factory(options, table)

        let write = rocksdb_writeoptions_create()!
        rocksdb_writeoptions_set_sync(write, durability == .durable ? 1 : 0)
        let read = rocksdb_readoptions_create()!

        var error: UnsafeMutablePointer<CChar>?
        let db = rocksdb_open(options, storeURL.path, &error)
        if let failure = Self.message(error) {
            rocksdb_readoptions_destroy(read)
            rocksdb_writeoptions_destroy(write)
            rocksdb_block_based_options_destroy(table)
            rocksdb_cache_destroy(cache)
            rocksdb_options_destroy(options)
            throw BenchError("RocksDB: open \(storeURL.path): \(failure)")
        }
        // The table options own the filter policy.
        handles = Handles(db: db!, options: options, table: table, cache: cache, write: write, read: read)
    }

    func close() throws {
        guard let handles else { return }
        self.handles = nil
        rocksdb_close(handles.db)
        rocksdb_readoptions_destroy(handles.read)
        rocksdb_writeoptions_destroy(handles.write)
        rocksdb_options_destroy(handles.options)
        rocksdb_block_based_options_destroy(handles.table)
        rocksdb_cache_destroy(handles.cache)
    }

    /// The C API's error string, freed; `nil` when there was none.
    fileprivate static func message(_ error: UnsafeMutablePointer<CChar>?) -> String? {
        guard let error else { return nil }
        defer { rocksdb_free(error) }
        return String(cString: error)
    }

    private func check(_ error: UnsafeMutablePointer<CChar>?, _ operation: String) throws {
        if let failure = Self.message(error) { throw BenchError("RocksDB: \(operation): \(failure)") }
    }

    /// Builds one batch with `fill` and writes it with the run's write options: one save.
    private func write(_ operation: String, _ fill: (OpaquePointer) throws -> Void) throws {
        let handles = try opened
        let batch = rocksdb_writebatch_create()!
        defer { rocksdb_writebatch_destroy(batch) }
        try fill(batch)
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_write(handles.db, handles.write, batch, &error)
        try check(error, operation)
    }

    private static func put(_ batch: OpaquePointer, _ key: [UInt8], _ value: [UInt8]) {
        key.withUnsafeBufferPointer { key in
            value.withUnsafeBufferPointer { value in
                key.withMemoryRebound(to: CChar.self) { key in
                    value.withMemoryRebound(to: CChar.self) { value in
                        rocksdb_writebatch_put(batch, key.baseAddress, key.count, value.baseAddress, value.count)
                    }
                }
            }
        }
    }

    func insertAll(_ dataset: Dataset) throws {
        for part in dataset.saveParts {
            try write("insert the data set") { batch in
                if part.lowerBound == 0 { Self.putDepartments(dataset.departments, into: batch) }
                Self.putEmployees(dataset.employees[part], firstKey: Dataset.employeeKey(part.lowerBound), into: batch)
            }
        }
    }

    func insertDepartments(_ departments: [Department]) throws {
        try write("insert departments") { batch in Self.putDepartments(departments, into: batch) }
    }

    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws {
        try write("insert employees") { batch in Self.putEmployees(employees, firstKey: firstKey, into: batch) }
    }

    private static func putDepartments(_ departments: [Department], into batch: OpaquePointer) {
        var key = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        for (index, department) in departments.enumerated() {
            KeyValueRow.writeKey(KeyValueRow.departmentPrefix, Dataset.departmentKey(index), into: &key)
            KeyValueRow.encode(department, into: &value)
            put(batch, key, value)
        }
    }

    private static func putEmployees(_ employees: ArraySlice<Employee>, firstKey: Int64, into batch: OpaquePointer) {
        var key = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        var primaryKey = firstKey
        for employee in employees {
            KeyValueRow.writeKey(KeyValueRow.employeePrefix, primaryKey, into: &key)
            KeyValueRow.encode(employee, into: &value)
            put(batch, key, value)
            primaryKey += 1
        }
    }

    /// Runs `body` with the value of employee `key` (pinned, not copied), or `nil` when missing.
    fileprivate static func withEmployee<T>(
        _ db: OpaquePointer, _ options: OpaquePointer, _ key: Int64, keyBuffer: inout [UInt8],
        _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        KeyValueRow.writeKey(KeyValueRow.employeePrefix, key, into: &keyBuffer)
        var error: UnsafeMutablePointer<CChar>?
        let slice = keyBuffer.withUnsafeBufferPointer { key in
            key.withMemoryRebound(to: CChar.self) { key in
                rocksdb_get_pinned(db, options, key.baseAddress, key.count, &error)
            }
        }
        if let failure = message(error) { throw BenchError("RocksDB: read employee \(key): \(failure)") }
        guard let slice else { return try body(nil) }
        defer { rocksdb_pinnableslice_destroy(slice) }
        var length = 0
        let value = rocksdb_pinnableslice_value(slice, &length)
        return try body(UnsafeRawBufferPointer(start: value, count: length))
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        let handles = try opened
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        return try Self.withEmployee(handles.db, handles.read, key, keyBuffer: &keyBuffer) { value in
            try value.map(KeyValueRow.nameAndSalary)
        }
    }

    func lookUp(_ keys: [Int64]) throws -> Int64 {
        let handles = try opened
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var checksum: Int64 = 0
        for key in keys {
            let (name, salary) = try Self.withEmployee(handles.db, handles.read, key, keyBuffer: &keyBuffer) { value in
                try KeyValueRow.nameAndSalary(try value.orThrow("RocksDB: employee \(key) is missing"))
            }
            checksum &+= salary &+ Int64(name.utf8.count)
        }
        return checksum
    }

    /// Visits every employee's value in key order, through an iterator bounded to the employees.
    private func forEachEmployee(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let handles = try opened
        let options = rocksdb_readoptions_create()!
        defer { rocksdb_readoptions_destroy(options) }
        // Every employee key sorts below the next entity byte: the iterator's upper bound, which
        // must stay alive while the iterator does.
        let upperBound: [CChar] = [CChar(bitPattern: KeyValueRow.employeePrefix + 1)]
        try upperBound.withUnsafeBufferPointer { bound in
            rocksdb_readoptions_set_iterate_upper_bound(options, bound.baseAddress, bound.count)
            let iterator = rocksdb_create_iterator(handles.db, options)!
            defer { rocksdb_iter_destroy(iterator) }
            var start = CChar(bitPattern: KeyValueRow.employeePrefix)
            rocksdb_iter_seek(iterator, &start, 1)
            while rocksdb_iter_valid(iterator) != 0 {
                var length = 0
                let value = rocksdb_iter_value(iterator, &length)
                try body(UnsafeRawBufferPointer(start: value, count: length))
                rocksdb_iter_next(iterator)
            }
            var error: UnsafeMutablePointer<CChar>?
            rocksdb_iter_get_error(iterator, &error)
            try check(error, "iterate over the employees")
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
        throw BenchError("RocksDB has no secondary index: W5 does not run on it")
    }

    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        throw BenchError("RocksDB has no secondary index: W5 does not run on it")
    }

    /// Reads each row, rewrites its salary in place, and writes every new row in one batch.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws {
        let handles = try opened
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var value: [UInt8] = []
        try write("update salaries") { batch in
            for change in changes {
                try Self.withEmployee(handles.db, handles.read, change.key, keyBuffer: &keyBuffer) { row in
                    let row = try row.orThrow("RocksDB: employee \(change.key) is missing")
                    value.removeAll(keepingCapacity: true)
                    value.append(contentsOf: row)
                }
                KeyValueRow.setSalary(change.salary, in: &value)
                Self.put(batch, keyBuffer, value)
            }
        }
    }

    func delete(_ keys: [Int64]) throws {
        var key = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        try write("delete employees") { batch in
            for primaryKey in keys {
                KeyValueRow.writeKey(KeyValueRow.employeePrefix, primaryKey, into: &key)
                key.withUnsafeBufferPointer { key in
                    key.withMemoryRebound(to: CChar.self) { rocksdb_writebatch_delete(batch, $0.baseAddress, $0.count) }
                }
            }
        }
    }

    /// `CompactRange` over every key: merges every level into the last, dropping the deleted rows
    /// and their tombstones.
    func compact() throws -> [String: Double] {
        let handles = try opened
        let filesBefore = try tableFileCount()
        rocksdb_compact_range(handles.db, nil, 0, nil, 0)
        return ["tableFilesBefore": Double(filesBefore), "tableFilesAfter": Double(try tableFileCount())]
    }

    /// The table files in the store's directory.
    private func tableFileCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: storeURL.path).filter { $0.hasSuffix(".sst") }.count
    }

    /// The store's files after the memtable is flushed into a table file (RocksDB's counterpart of
    /// a checkpoint: the write-ahead log it covered is then deleted).
    func settledBytesOnDisk() throws -> Int64 {
        let handles = try opened
        let flush = rocksdb_flushoptions_create()!
        defer { rocksdb_flushoptions_destroy(flush) }
        rocksdb_flushoptions_set_wait(flush, 1)
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_flush(handles.db, flush, &error)
        try check(error, "flush")
        try deleteObsoleteTables(handles.db)
        return try DiskUsage.bytes(at: storeURL)
    }

    /// Deletes the table files no version uses any more, and waits (up to 5 s) until the
    /// directory holds only live ones. A compaction's inputs stay while a reader thread's cached
    /// view still refers to them (W8's reader), and RocksDB deletes them at its next flush or
    /// compaction; turning file deletions off and on again finds and deletes them now.
    private func deleteObsoleteTables(_ db: OpaquePointer) throws {
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_disable_file_deletions(db, &error)
        try check(error, "disable file deletions")
        rocksdb_enable_file_deletions(db, 1, &error)
        try check(error, "enable file deletions")
        let deadline = monotonicNanoseconds() + 5_000_000_000
        var live: Set<String> = []
        var tables: [String] = []
        while monotonicNanoseconds() < deadline {
            let files = rocksdb_livefiles(db)!
            defer { rocksdb_livefiles_destroy(files) }
            live = Set(
                (0..<rocksdb_livefiles_count(files)).map {
                    String(cString: rocksdb_livefiles_name(files, $0)).split(separator: "/").last.map(String.init) ?? ""
                })
            tables = try FileManager.default.contentsOfDirectory(atPath: storeURL.path).filter { $0.hasSuffix(".sst") }
            if tables.allSatisfy(live.contains) { return }
            usleep(1000)
        }
        throw BenchError(
            "RocksDB: table files \(tables.sorted()) in \(storeURL.path) after 5 s, live ones \(live.sorted())")
    }

    func storageDetails(readKey key: Int64) throws -> [String: Double] {
        [:]
    }

    func makeConcurrentReader() throws -> any ConcurrentReader {
        Reader(db: try opened.db)
    }

    /// The RocksDB version, from the options file a database writes when it opens (the C API
    /// has no call for it): opens a scratch database under `directory`, which it removes.
    static func version(scratch directory: URL) throws -> String {
        let engine = RocksDBEngine(directory: directory, durability: .relaxed)
        defer { try? FileManager.default.removeItem(at: directory) }
        try engine.open()
        try engine.close()
        let store = engine.storeURL
        for file in try FileManager.default.contentsOfDirectory(atPath: store.path) where file.hasPrefix("OPTIONS-") {
            let text = try String(contentsOf: store.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("rocksdb_version=") { return String(trimmed.dropFirst("rocksdb_version=".count)) }
            }
        }
        return "unknown"
    }

    /// Reads with the same database handle, which RocksDB lets any thread use, and read options of
    /// its own.
    ///
    /// `@unchecked Sendable`: the handle is thread-safe, and the key buffer and options are used
    /// by one reading thread at a time (then released by ``close()`` once reading has stopped);
    /// the engine keeps the database open until the reader is closed.
    private final class Reader: ConcurrentReader, @unchecked Sendable {
        let db: OpaquePointer
        let options = rocksdb_readoptions_create()!
        var keyBuffer = [UInt8](repeating: 0, count: KeyValueRow.keyLength)
        var closed = false

        init(db: OpaquePointer) {
            self.db = db
        }

        func read(_ key: Int64) throws -> Bool {
            try RocksDBEngine.withEmployee(db, options, key, keyBuffer: &keyBuffer) { value in
                guard let value else { return false }
                let (name, salary) = try KeyValueRow.nameAndSalary(value)
                return !name.isEmpty && salary > 0
            }
        }

        func close() throws {
            guard !closed else { return }
            closed = true
            rocksdb_readoptions_destroy(options)
        }
    }
}
