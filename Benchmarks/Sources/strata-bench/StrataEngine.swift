import BenchSupport
import Foundation
import StrataStore
import Workloads

/// The engine under test: a `StrataStore.Store` with the default configuration (background
/// maintenance on) and the durability of the run.
final class StrataEngine: BenchEngine {
    static let name = "Strata"

    private let directory: URL
    private let durability: BenchDurability
    private var store: Store?

    private var storeURL: URL { directory.appendingPathComponent("bench.strata") }
    var filesURL: URL { storeURL }

    init(directory: URL, durability: BenchDurability) {
        self.directory = directory
        self.durability = durability
    }

    func open() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = StoreConfiguration()
        configuration.durability = durability == .durable ? .durable : .relaxed
        configuration.backgroundMaintenance = true
        // No history, as SQLite keeps none and Core Data's default is off: compaction (W8) may
        // then reclaim every dead row.
        configuration.historyTracking = false
        // Background compaction would start on W8's deletes before the timed `compact()` and
        // blur its figures; checkpoints still run in the background.
        configuration.compactionThreshold = 2
        configuration.logger.logLevel = .warning  // keep open/close/checkpoint events out of the progress
        // For choosing the defaults: STRATA_BLOCK_SIZE and STRATA_CACHE_SIZE (bytes) override them.
        let environment = ProcessInfo.processInfo.environment
        if let blockSize = environment["STRATA_BLOCK_SIZE"].flatMap(Int.init) { configuration.blockSize = blockSize }
        if let cacheSize = environment["STRATA_CACHE_SIZE"].flatMap(Int.init) { configuration.cacheSize = cacheSize }
        store = try Store.open(at: storeURL, schema: StrataModel.schema(), configuration: configuration)
    }

    func close() throws {
        try store?.close()
        store = nil
    }

    private var opened: Store {
        get throws {
            guard let store else { throw BenchError("Strata: the store is not open") }
            return store
        }
    }

    /// Allocates `count` keys of `entity`, which must be the keys the other engine uses.
    private func allocateKeys(_ entity: Int, count: Int, expectedFirst: Int64) throws -> ClosedRange<Int64> {
        let keys = try opened.allocateKeys(for: entity, count: count)
        guard keys.lowerBound == expectedFirst, keys.count == count else {
            throw BenchError(
                "Strata: allocated keys \(keys) for entity \(entity), expected \(count) from \(expectedFirst)")
        }
        return keys
    }

    func insertAll(_ dataset: Dataset) throws {
        let store = try opened
        let keys = try allocateKeys(
            StrataModel.employee, count: dataset.employees.count, expectedFirst: Dataset.employeeKey(0))
        for part in dataset.saveParts {
            var transaction = Transaction()
            if part.lowerBound == 0 {
                transaction.operations.reserveCapacity(dataset.departments.count + part.count)
                appendDepartments(
                    dataset.departments, to: &transaction,
                    keys: try allocateKeys(
                        StrataModel.department, count: dataset.departments.count,
                        expectedFirst: Dataset.departmentKey(0)))
            }
            for index in part {
                transaction.insert(
                    StrataModel.employee, key: keys.lowerBound + Int64(index),
                    row: StrataModel.row(dataset.employees[index]))
            }
            _ = try store.commit(transaction)
        }
    }

    func insertDepartments(_ departments: [Department]) throws {
        var transaction = Transaction()
        appendDepartments(
            departments, to: &transaction,
            keys: try allocateKeys(
                StrataModel.department, count: departments.count, expectedFirst: Dataset.departmentKey(0)))
        _ = try opened.commit(transaction)
    }

    private func appendDepartments(
        _ departments: [Department], to transaction: inout Transaction, keys: ClosedRange<Int64>
    ) {
        for (key, department) in zip(keys, departments) {
            transaction.insert(StrataModel.department, key: key, row: StrataModel.row(department))
        }
    }

    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws {
        let keys = try allocateKeys(StrataModel.employee, count: employees.count, expectedFirst: firstKey)
        var transaction = Transaction()
        for (key, employee) in zip(keys, employees) {
            transaction.insert(StrataModel.employee, key: key, row: StrataModel.row(employee))
        }
        _ = try opened.commit(transaction)
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        guard let row = try opened.read(StrataModel.employee, key: key) else { return nil }
        return try Self.nameAndSalary(row)
    }

    fileprivate static func nameAndSalary(_ row: Row) throws -> (name: String, salary: Int64) {
        guard case .string(let name) = row[StrataModel.EmployeeColumn.name],
            case .int(let salary) = row[StrataModel.EmployeeColumn.salary]
        else { throw BenchError("Strata: unexpected employee row \(row)") }
        return (name, salary)
    }

    func lookUp(_ keys: [Int64]) throws -> Int64 {
        let store = try opened
        var checksum: Int64 = 0
        for key in keys {
            guard let row = try store.read(StrataModel.employee, key: key) else {
                throw BenchError("Strata: employee \(key) is missing")
            }
            let (name, salary) = try Self.nameAndSalary(row)
            checksum &+= salary &+ Int64(name.utf8.count)
        }
        return checksum
    }

    func scanNotes() throws -> (count: Int, notesBytes: Int64) {
        var count = 0
        var bytes: Int64 = 0
        try opened.scan(StrataModel.employee) { _, row in
            guard case .string(let notes) = row[StrataModel.EmployeeColumn.notes] else {
                throw BenchError("Strata: unexpected employee row \(row)")
            }
            bytes += Int64(notes.utf8.count)
            count += 1
        }
        return (count, bytes)
    }

    /// Walks the salary fetch index from the top, reading each row to test `active`, until
    /// `limit` match. The index answers `limit` keys at a time (then twice as many, from the
    /// top again), so a run reads only the rows it needs.
    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner] {
        let store = try opened
        let query = IndexQuery.range(lower: IndexBound(.int(minimumSalary), inclusive: false), upper: nil)
        var earners: [TopEarner] = []
        for _ in 0..<repetitions {
            earners.removeAll(keepingCapacity: true)
            var examined = 0
            var batch = limit + limit / 4
            while earners.count < limit {
                let keys = try store.keys(
                    StrataModel.employee, column: StrataModel.EmployeeColumn.salary, matching: query,
                    descending: true, limit: batch)
                for key in keys[examined...] {
                    let earner = try Self.earner(try store.read(StrataModel.employee, key: key), key: key)
                    if earner.active { earners.append(earner) }
                    if earners.count == limit { break }
                }
                guard keys.count == batch else { break }
                examined = keys.count
                batch *= 2
            }
        }
        return earners
    }

    /// The keys from the salary fetch index, then each row read to test `active`.
    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        let store = try opened
        let query = IndexQuery.range(lower: IndexBound(.int(minimumSalary), inclusive: false), upper: nil)
        var count = 0
        for _ in 0..<repetitions {
            count = 0
            for key in try store.keys(StrataModel.employee, column: StrataModel.EmployeeColumn.salary, matching: query)
            {
                if try Self.earner(try store.read(StrataModel.employee, key: key), key: key).active { count += 1 }
            }
        }
        return count
    }

    private static func earner(_ row: Row?, key: Int64) throws -> TopEarner {
        guard let row, case .int(let salary) = row[StrataModel.EmployeeColumn.salary],
            case .bool(let active) = row[StrataModel.EmployeeColumn.active]
        else { throw BenchError("Strata: employee \(key) is missing or unexpected") }
        return TopEarner(salary: salary, active: active)
    }

    /// Reads each row and commits its new image: the engine's update takes the whole row.
    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws {
        let store = try opened
        var transaction = Transaction()
        transaction.operations.reserveCapacity(changes.count)
        for change in changes {
            guard var row = try store.read(StrataModel.employee, key: change.key) else {
                throw BenchError("Strata: employee \(change.key) is missing")
            }
            row[StrataModel.EmployeeColumn.salary] = .int(change.salary)
            transaction.update(
                StrataModel.employee, key: change.key, row: row,
                changedColumns: [StrataModel.EmployeeColumn.salary])
        }
        _ = try store.commit(transaction)
    }

    func delete(_ keys: [Int64]) throws {
        var transaction = Transaction()
        transaction.operations.reserveCapacity(keys.count)
        for key in keys {
            transaction.delete(StrataModel.employee, key: key)
        }
        _ = try opened.commit(transaction)
    }

    func compact() throws -> [String: Double] {
        let report = try opened.compact()
        return [
            "segmentsCompacted": Double(report.segmentsCompacted),
            "segmentBytesRead": Double(report.bytesRead),
            "segmentBytesWritten": Double(report.bytesWritten),
            "segmentBytesBefore": Double(report.bytesBefore),
            "segmentBytesAfter": Double(report.bytesAfter),
        ]
    }

    func employeeCount() throws -> Int {
        try opened.count(StrataModel.employee)
    }

    /// The store's files once closed: closing trims the space allocated ahead of the log.
    func settledBytesOnDisk() throws -> Int64 {
        try close()
        let bytes = try DiskUsage.bytes(at: storeURL)
        try open()
        return bytes
    }

    func storageDetails(readKey key: Int64) throws -> [String: Double] {
        let statistics = try opened.statistics
        try close()
        let checkpoints = storeURL.appendingPathComponent("checkpoints")
        for file in try FileManager.default.contentsOfDirectory(atPath: checkpoints.path) {
            try FileManager.default.removeItem(at: checkpoints.appendingPathComponent(file))
        }
        let replay = try measure {
            try open()
            return try readNameAndSalary(key)
        }
        guard replay.result != nil else { throw BenchError("Strata: employee \(key) is missing after a full replay") }
        return [
            "index.bytesPerObject": Double(statistics.indexBytesWhenRead) / Double(statistics.liveRows),
            "index.residentBytesPerObject": Double(statistics.indexBytes) / Double(statistics.liveRows),
            "fetchIndex.bytesPerObject": Double(statistics.fetchIndexBytes) / Double(statistics.liveRows),
            "compression.ratio": Double(statistics.liveRowBytes) / Double(statistics.segmentBytes),
            "open.withoutCheckpointMs": replay.seconds * 1000,
        ]
    }

    func makeConcurrentReader() throws -> any ConcurrentReader {
        Reader(store: try opened)
    }

    /// The same store: `Store` is `Sendable` and serves reads from any thread.
    private struct Reader: ConcurrentReader {
        let store: Store

        func read(_ key: Int64) throws -> Bool {
            guard let row = try store.read(StrataModel.employee, key: key) else { return false }
            let (name, salary) = try StrataEngine.nameAndSalary(row)
            return !name.isEmpty && salary > 0
        }

        func close() throws {}
    }
}
