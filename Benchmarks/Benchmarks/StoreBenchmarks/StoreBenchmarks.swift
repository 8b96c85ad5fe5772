import Benchmark
import Foundation
@_spi(Benchmarks) import StrataStore
import Synchronization
import Workloads

// Engine-level micro-benchmarks of StrataStore, run by `swift package benchmark`.
// Gate on allocation counts and tolerant percentiles, never on raw wall time.

/// A relaxed store in a temporary directory, filled with the reference data set.
struct StoreFixture: Sendable {
    let store: Store
    let directory: URL
    /// The employees' rows, in data set order (employee `i` is under key `i + 1` when filled).
    let rows: [Row]
    /// The employees' keys in random order (when filled).
    let shuffledKeys: [PrimaryKey]

    /// Opens a fresh store with the departments of an `employeeCount` data set and, when `fill`
    /// is true, its employees too (one commit), then reads every employee once to warm the cache.
    init(employeeCount: Int, fill: Bool) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-store-benchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.logger.logLevel = .warning
        store = try Store.open(
            at: directory.appendingPathComponent("bench.strata"), schema: StrataModel.schema(),
            configuration: configuration)
        let dataset = Dataset(employeeCount: employeeCount)
        rows = dataset.employees.map(StrataModel.row)

        var transaction = Transaction()
        let departmentKeys = store.allocateKeys(for: StrataModel.department, count: dataset.departments.count)
        for (key, department) in zip(departmentKeys, dataset.departments) {
            transaction.insert(StrataModel.department, key: key, row: StrataModel.row(department))
        }
        guard fill else {
            _ = try store.commit(transaction)
            shuffledKeys = []
            return
        }
        let keys = store.allocateKeys(for: StrataModel.employee, count: rows.count)
        for (key, row) in zip(keys, rows) {
            transaction.insert(StrataModel.employee, key: key, row: row)
        }
        _ = try store.commit(transaction)
        var random = SplitMix64()
        var shuffled = Array(keys)
        random.shuffle(&shuffled)
        shuffledKeys = shuffled
        for key in shuffled {
            _ = try store.read(StrataModel.employee, key: key)
        }
    }

    func remove() throws {
        try store.close()
        try FileManager.default.removeItem(at: directory)
    }
}

/// Holds one benchmark's fixture from its setup to its teardown. `Sendable` through its mutex.
final class FixtureSlot: Sendable {
    private let slot = Mutex<StoreFixture?>(nil)

    var fixture: StoreFixture {
        guard let fixture = slot.withLock({ $0 }) else { fatalError("the benchmark's setup did not run") }
        return fixture
    }

    func set(_ fixture: StoreFixture) { slot.withLock { $0 = fixture } }

    func remove() throws {
        try slot.withLock { fixture in
            defer { fixture = nil }
            try fixture?.remove()
        }
    }
}

/// Employee rows of the reference data set, encoded the way a commit encodes them, for the
/// codec benchmarks. Every photo is nil; the notes are about 120 bytes.
struct CodecFixture: Sendable {
    /// The store's default block size: 16 KiB.
    static let blockSize = 16 << 10
    /// The number of rows in the record benchmarks.
    static let recordRowCount = 1_000

    /// The rows that fill one block of ``blockSize`` bytes.
    let blockRows: CodecBenchmarkRows
    /// The rows of one record: ``recordRowCount`` inserts.
    let recordRows: CodecBenchmarkRows
    /// The on-disk form of ``blockRows``.
    let block: [UInt8]
    /// The sealed record of ``recordRows``.
    let record: [UInt8]
    /// Reads blocks and records of the reference schema.
    let decoder: CodecBenchmarkDecoder

    /// Generates the rows, encodes them once and checks that they read back unchanged.
    init() throws {
        let schema = try StrataModel.schema()
        let dataset = Dataset(employeeCount: Self.recordRowCount)
        let rows = dataset.employees.map { employee in
            var employee = employee
            employee.photo = nil
            return StrataModel.row(employee)
        }
        let keys = rows.indices.map(Dataset.employeeKey)
        recordRows = try CodecBenchmarkRows(schema: schema, entity: StrataModel.employee, keys: keys, rows: rows)
        blockRows = recordRows.prefix(recordRows.rowsPerBlock(blockSize: Self.blockSize))
        decoder = CodecBenchmarkDecoder(schema: schema)
        block = blockRows.encodeBlock()
        record = try recordRows.encodeTransactionRecord(
            blockSize: Self.blockSize, timestamp: Date(timeIntervalSinceReferenceDate: 0), author: "bench")

        let decoded = try decoder.decodeBlock(block)
        guard decoded.keys == blockRows.keys, decoded.rows == blockRows.rows else {
            fatalError("the block does not read back the rows it was encoded from")
        }
        let parsed = try decoder.parseRecord(record)
        var recordRowsRead: [Row] = []
        for range in parsed.blocks { recordRowsRead += try decoder.decodeBlock(record, range: range).rows }
        guard parsed.operationCount == recordRows.count, recordRowsRead == recordRows.rows else {
            fatalError("the record does not read back the rows it was encoded from")
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .throughput]
    let employeeCount = 10_000

    // A relaxed commit of 10 new employees: key allocation, transaction, group commit.
    let commitSlot = FixtureSlot()
    Benchmark(
        "StoreCommitRelaxed10Rows",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2), maxIterations: 10_000)
    ) { benchmark in
        let fixture = commitSlot.fixture
        for _ in benchmark.scaledIterations {
            let keys = fixture.store.allocateKeys(for: StrataModel.employee, count: 10)
            var transaction = Transaction()
            for key in keys {
                transaction.insert(
                    StrataModel.employee, key: key, row: fixture.rows[Int(key % Int64(fixture.rows.count))])
            }
            blackHole(try fixture.store.commit(transaction))
        }
    } setup: {
        commitSlot.set(try StoreFixture(employeeCount: employeeCount, fill: false))
    } teardown: {
        try commitSlot.remove()
    }

    // A read by key whose block is in the cache, reading name and salary; 1,000 per iteration.
    let readSlot = FixtureSlot()
    Benchmark(
        "StoreReadByKeyCacheHit",
        configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: .seconds(2))
    ) { benchmark in
        let fixture = readSlot.fixture
        for index in benchmark.scaledIterations {
            let key = fixture.shuffledKeys[index % fixture.shuffledKeys.count]
            guard let row = try fixture.store.read(StrataModel.employee, key: key) else {
                fatalError("employee \(key) is missing")
            }
            blackHole(row[StrataModel.EmployeeColumn.name])
            blackHole(row[StrataModel.EmployeeColumn.salary])
        }
    } setup: {
        readSlot.set(try StoreFixture(employeeCount: employeeCount, fill: true))
    } teardown: {
        try readSlot.remove()
    }

    // A scan of all 10,000 employees (cached), reading notes.
    let scanSlot = FixtureSlot()
    Benchmark(
        "StoreScan10kRows",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2))
    ) { benchmark in
        let fixture = scanSlot.fixture
        for _ in benchmark.scaledIterations {
            var notesBytes = 0
            try fixture.store.scan(StrataModel.employee) { _, row in
                if case .string(let notes) = row[StrataModel.EmployeeColumn.notes] {
                    notesBytes += notes.utf8.count
                }
            }
            blackHole(notesBytes)
        }
    } setup: {
        scanSlot.set(try StoreFixture(employeeCount: employeeCount, fill: true))
    } teardown: {
        try scanSlot.remove()
    }

    // The engine's codecs, without I/O: one 16 KiB block of employee rows (101 rows),
    // and a commit record of 1,000 employee inserts (10 such blocks).
    let codec: CodecFixture
    do {
        codec = try CodecFixture()
    } catch {
        fatalError("the codec benchmarks' rows do not encode: \(error)")
    }

    // Encodes one block: rows to bytes, offsets and keys, LZ4, header and checksum.
    Benchmark(
        "RowBlockEncode",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2))
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(codec.blockRows.encodeBlock())
        }
    }

    // Decodes one block and all its rows: checksum, LZ4, layout, every row.
    Benchmark(
        "RowBlockDecode",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2))
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try codec.decoder.decodeBlock(codec.block))
        }
    }

    // Encodes and seals the record of a 1,000-row insert transaction.
    Benchmark(
        "RecordEncode",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2))
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try codec.recordRows.encodeTransactionRecord(blockSize: CodecFixture.blockSize))
        }
    }

    // Parses and verifies that record: checksum, metadata, operations, block spans (rows not decoded).
    Benchmark(
        "RecordParse",
        configuration: .init(metrics: metrics, maxDuration: .seconds(2))
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try codec.decoder.parseRecord(codec.record))
        }
    }
}
