import Foundation
import StrataSynchronization
import StrataTestSupport
import Testing
@testable import StrataStore

/// Fetch-index answers (equality, ranges, IN, descending with a limit, counts) on an int64, a
/// string and a reference column agree with a brute-force scan after random changes, after
/// reopening from a checkpoint, after a crash (checkpoint and tail replay), after a full replay
/// and after compaction.
@Suite struct FetchIndexTests {
    static let department = 0
    static let item = 1
    /// Item's columns.
    static let score = 0, label = 1, owner = 2, note = 3
    static let indexedColumns = [score, label, owner]

    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Department", columns: [ColumnSchema(name: "name", type: .string, isNullable: false)]),
        EntitySchema(
            id: 1, name: "Item",
            columns: [
                ColumnSchema(name: "score", type: .int64, isIndexed: true),
                ColumnSchema(name: "label", type: .string, isIndexed: true),
                ColumnSchema(name: "owner", type: .reference(entity: 0)),
                ColumnSchema(name: "note", type: .string),
            ]),
    ])

    /// Labels, with two spellings of "é" that Swift strings (and so the index) treat as equal.
    static let labels: [Value] = [
        .null, .string(""), .string("a"), .string("ab"), .string("b"), .string("Z"), .string("é"), .string("e\u{301}"),
        .string("漢字"), .string("👍🏽"), .string("zz"),
    ]

    /// Values queries use: every value rows hold, and some they never hold.
    static func candidates(_ column: Int) -> [Value] {
        switch column {
        case score: return [.null, .int(Int64.min), .int(Int64.max)] + (-22...22).map { .int(Int64($0)) }
        case label: return labels + [.string("aa"), .string("c"), .string("zzz"), .string("\u{10FFFF}")]
        default: return [.null] + (1...7).map { .reference(Int64($0)) }
        }
    }

    static func randomRow(_ random: inout SplitMix64) -> Row {
        let score: Value
        switch Int.random(in: 0..<20, using: &random) {
        case 0, 1: score = .null
        case 2: score = .int(Int64.min)
        case 3: score = .int(Int64.max)
        default: score = .int(Int64.random(in: -20...20, using: &random))
        }
        let owner: Value =
            Int.random(in: 0..<5, using: &random) == 0 ? .null : .reference(Int64.random(in: 1...5, using: &random))
        let note: Value = Bool.random(using: &random) ? .null : .string("note \(random.next() % 1000)")
        return Row([score, labels.randomElement(using: &random)!, owner, note])
    }

    /// Commits `count` random transactions of inserts, updates and deletes, mirrored in `model`.
    static func churn(_ store: Store, _ model: inout [PrimaryKey: Row], count: Int, _ random: inout SplitMix64) throws {
        for _ in 0..<count {
            var transaction = Transaction()
            var touched = Set<PrimaryKey>()
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let live = model.keys.filter { !touched.contains($0) }
                let choice = Int.random(in: 0..<10, using: &random)
                if choice < 4 || live.isEmpty {
                    let key = store.allocateKeys(for: item).lowerBound
                    let row = randomRow(&random)
                    transaction.insert(item, key: key, row: row)
                    model[key] = row
                    touched.insert(key)
                } else if choice < 8 {
                    let key = live.randomElement(using: &random)!
                    var row = model[key]!
                    let fresh = randomRow(&random)
                    for column in 0..<4 where Bool.random(using: &random) { row[column] = fresh[column] }
                    let changed = (0..<4).filter { row[$0] != model[key]![$0] }
                    transaction.update(item, key: key, row: row, changedColumns: changed)
                    model[key] = row
                    touched.insert(key)
                } else {
                    let key = live.randomElement(using: &random)!
                    transaction.delete(item, key: key)
                    model[key] = nil
                    touched.insert(key)
                }
            }
            try store.commit(transaction)
        }
    }

    /// Whether `value` matches `query`, by the index's rules: values neither of which is less
    /// than the other are equal, and `null` is never in a range.
    static func matches(_ value: Value, _ query: IndexQuery) -> Bool {
        func same(_ a: Value, _ b: Value) -> Bool { !(a < b) && !(b < a) }
        switch query {
        case .equal(let wanted): return same(value, wanted)
        case .in(let wanted): return wanted.contains { same(value, $0) }
        case .range(let lower, let upper):
            if value.isNull { return false }
            if let lower, lower.isInclusive ? value < lower.value : !(lower.value < value) { return false }
            if let upper, upper.isInclusive ? upper.value < value : !(value < upper.value) { return false }
            return true
        }
    }

    static func randomQuery(_ column: Int, _ random: inout SplitMix64) -> IndexQuery {
        let values = candidates(column)
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            return .equal(values.randomElement(using: &random)!)
        case 1:
            return .in((0..<Int.random(in: 0...5, using: &random)).map { _ in values.randomElement(using: &random)! })
        default:
            func bound() -> IndexBound? {
                Int.random(in: 0..<4, using: &random) == 0
                    ? nil
                    : IndexBound(
                        values.dropFirst().randomElement(using: &random)!, inclusive: Bool.random(using: &random))
            }
            return .range(lower: bound(), upper: bound())
        }
    }

    /// Checks the store's rows against `model` and every fetch-index answer against a scan.
    static func check(_ store: Store, _ model: [PrimaryKey: Row], _ random: inout SplitMix64, _ stage: Comment) throws {
        var scanned: [PrimaryKey: Row] = [:]
        try store.scan(item) { key, row in scanned[key] = row }
        #expect(scanned == model, "\(stage): scan differs from the model")
        #expect(store.count(item) == model.count, "\(stage)")
        for column in indexedColumns {
            let pairs = scanned.map { (value: $0.value[column], key: $0.key) }.sorted {
                $0.value < $1.value || (!($1.value < $0.value) && $0.key < $1.key)
            }
            var queries: [IndexQuery] = candidates(column).map { .equal($0) }
            queries += [.range(lower: nil, upper: nil), .in([]), .in(candidates(column))]
            queries += (0..<60).map { _ in randomQuery(column, &random) }
            for query in queries {
                let expected = pairs.filter { matches($0.value, query) }.map(\.key)
                let keys = try store.keys(item, column: column, matching: query)
                #expect(keys == expected, "\(stage): column \(column) \(query)")
                let limit = Int.random(in: 0...6, using: &random)
                let descending = try store.keys(item, column: column, matching: query, descending: true, limit: limit)
                #expect(
                    descending == Array(expected.reversed().prefix(limit)),
                    "\(stage): column \(column) \(query) descending, limit \(limit)")
                let ascending = try store.keys(item, column: column, matching: query, limit: limit)
                #expect(
                    ascending == Array(expected.prefix(limit)), "\(stage): column \(column) \(query) limit \(limit)")
                #expect(
                    try store.countKeys(item, column: column, matching: query) == expected.count,
                    "\(stage): count \(column) \(query)")
            }
        }
        let error = #expect(throws: StoreError.self) { try store.keys(item, column: note, matching: .equal(.null)) }
        #expect(error?.code == .invalidValue)
    }

    static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 4 << 10
        configuration.blockSize = 1 << 10
        configuration.logger.logLevel = .error
        return configuration
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func indexesMatchScanThroughReopenReplayAndCompaction(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let directory = TemporaryDirectory()
        let url = directory.store()
        var model: [PrimaryKey: Row] = [:]
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        var departments = Transaction()
        for key in store!.allocateKeys(for: Self.department, count: 5) {
            departments.insert(Self.department, key: key, row: Row([.string("d\(key)")]))
        }
        try store!.commit(departments)

        try Self.churn(store!, &model, count: 40, &random)
        try Self.check(store!, model, &random, "after random changes")
        try store!.checkpoint()
        try Self.churn(store!, &model, count: 20, &random)
        try store!.close()
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.check(store!, model, &random, "after reopen from the checkpoint")

        try Self.churn(store!, &model, count: 30, &random)
        store = nil  // a crash: the next open loads the checkpoint and replays the tail
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.check(store!, model, &random, "after checkpoint and tail replay")
        #expect(store!.segments().count > 2, "segments rolled")

        try Self.churn(store!, &model, count: 20, &random)
        try store!.close()
        store = nil
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.check(store!, model, &random, "after full replay")

        try Self.churn(store!, &model, count: 30, &random)
        try store!.deleteHistory(before: store!.lastSequence + 1)
        let report = try store!.compact()
        #expect(report.segmentsCompacted > 0 && report.bytesAfter < report.bytesBefore, "\(report)")
        try Self.check(store!, model, &random, "after compaction")
        try Self.churn(store!, &model, count: 10, &random)
        try Self.check(store!, model, &random, "after changes following compaction")
        store = nil  // crash after compaction
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.check(store!, model, &random, "after compaction and tail replay")
        try store!.close()
        store = nil
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.check(store!, model, &random, "after compaction and full replay")
        try store!.close()
    }

    /// Opening leaves the checkpoint's fetch indexes unparsed until something needs them: reads
    /// by key do not parse them, the first commit does (and keeps them right), a store opened and
    /// closed unused keeps its checkpoint's indexes, and an index query after a reopen parses
    /// them and answers as before.
    @Test func theCheckpointsFetchIndexesAreParsedAtTheirFirstUse() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let keys = try Self.checkpointedStore(at: url, employees: 40_000)
        var store: Store

        let (salary, seventh) = (1, keys.lowerBound + 7)
        let everyone = IndexQuery.range(lower: IndexBound(.int(30_000), inclusive: true), upper: nil)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(Self.pending(store), "the open parsed the fetch indexes")
        #expect(try store.read(TestSchema.employee, key: seventh) == TestSchema.employee(7))
        #expect(Self.pending(store), "a read by key parsed the fetch indexes")
        try store.close()
        #expect(Self.pending(store), "close parsed the fetch indexes of an unused store")

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var row = TestSchema.employee(7)
        row[salary] = .int(1_000_000)
        var update = Transaction()
        update.update(TestSchema.employee, key: seventh, row: row, changedColumns: [salary])
        try store.commit(update)
        #expect(!Self.pending(store), "a commit left the fetch indexes unparsed")
        #expect(try store.keys(TestSchema.employee, column: salary, matching: .equal(.int(1_000_000))) == [seventh])
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: .equal(.int(30_049))) == 0)
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: everyone) == 40_000)
        #expect(try store.keys(TestSchema.employee, column: salary, matching: .equal(.int(1_000_000))) == [seventh])
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: .equal(.int(30_007))) == 1)
        try store.close()
    }

    /// Background maintenance leaves the fetch indexes unparsed while it finds nothing to
    /// compact (at 10M rows a parse costs seconds of a core and 64 bytes a row), and a compaction
    /// that rewrites segments parses them first, so the checkpoint it writes keeps them whole.
    @Test func compactionParsesTheFetchIndexesOnlyWhenItRewritesSegments() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let keys = try Self.checkpointedStore(at: url, employees: 20_000)
        let salary = 1
        let everyone = IndexQuery.range(lower: IndexBound(.int(0), inclusive: true), upper: nil)
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        store.runMaintenance()
        #expect(Self.pending(store), "a maintenance round with nothing to compact parsed the fetch indexes")
        var delete = Transaction()
        for key in keys.prefix(10_000) { delete.delete(TestSchema.employee, key: key) }
        try store.commit(delete)
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(Self.pending(store))
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(!Self.pending(store), "a compaction that rewrote segments left the fetch indexes unparsed")
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: everyone) == 10_000)
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: everyone) == 10_000)
        #expect(try store.keys(TestSchema.employee, column: salary, matching: .equal(.int(30_000 + 10_007 * 7))) == [keys.lowerBound + 10_007])
        try store.close()
    }

    /// Threads that first need the fetch indexes at the same time, right after an open (two
    /// querying, two committing), share one parse: every query sees a whole index, and every
    /// commit's change is in it afterwards and after a reopen.
    @Test func concurrentFirstUsesShareOneParse() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let keys = try Self.checkpointedStore(at: url, employees: 20_000)
        var store: Store

        let salary = 1
        let everyone = IndexQuery.range(lower: IndexBound(.int(0), inclusive: true), upper: nil)
        let raised = IndexQuery.range(lower: IndexBound(.int(5_000_000), inclusive: true), upper: nil)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let opened = store
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            do {
                for step in 0..<50 {
                    if worker < 2 {
                        let count = try opened.countKeys(TestSchema.employee, column: salary, matching: everyone)
                        if count != 20_000 { failures.withLock { $0.append("worker \(worker) counted \(count)") } }
                    } else {
                        let index = (worker - 2) * 50 + step
                        var row = TestSchema.employee(index)
                        row[salary] = .int(Int64(5_000_000 + index))
                        var update = Transaction()
                        update.update(
                            TestSchema.employee, key: keys.lowerBound + Int64(index), row: row, changedColumns: [salary])
                        try opened.commit(update)
                    }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: raised) == 100)
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: raised) == 100)
        #expect(try store.countKeys(TestSchema.employee, column: salary, matching: everyone) == 20_000)
        try store.close()
    }

    /// Makes a store at `url` of `employees` employees and closes it, which writes a checkpoint
    /// holding the salary index; returns their keys.
    static func checkpointedStore(at url: URL, employees: Int) throws -> ClosedRange<PrimaryKey> {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var transaction = Transaction()
        let keys = store.allocateKeys(for: TestSchema.employee, count: employees)
        for (index, key) in keys.enumerated() {
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(index))
        }
        try store.commit(transaction)
        try store.close()
        return keys
    }

    /// Whether `store` still holds its checkpoint's fetch indexes unparsed.
    static func pending(_ store: Store) -> Bool { store.fetchIndexesPending.load(ordering: .acquiring) }
}
