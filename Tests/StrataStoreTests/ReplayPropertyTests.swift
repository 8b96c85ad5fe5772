import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A property test: for random transaction sequences over two entities, with checkpoints,
/// segment rolls, compactions, history deletion, crashes and reopens on the way, the store
/// equals an in-memory model while open, after a checkpoint and tail replay, and after a full
/// replay of the log: live keys and rows, fetch-index contents, history and sequence numbers.
///
/// `STRATA_REPLAY_SEQUENCES` sets how many sequences run (the default is 300).
@Suite struct ReplayPropertyTests {
    static let folder = 0
    static let file = 1

    /// Folder deletes leave no tombstone; File deletes keep `title`.
    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Folder",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, isIndexed: true),
                ColumnSchema(name: "size", type: .int64),
                ColumnSchema(name: "tag", type: .string),
            ]),
        EntitySchema(
            id: 1, name: "File",
            columns: [
                ColumnSchema(name: "amount", type: .int64, isIndexed: true),
                ColumnSchema(name: "folder", type: .reference(entity: 0)),
                ColumnSchema(name: "blob", type: .binary),
                ColumnSchema(name: "title", type: .string, isNullable: false, keepsTombstone: true),
            ]),
    ])

    static let seeds: [UInt64] = {
        let count = ProcessInfo.processInfo.environment["STRATA_REPLAY_SEQUENCES"].flatMap { Int($0) } ?? 300
        return (0..<UInt64(count)).map { $0 }
    }()

    @Test(arguments: seeds)
    func replayedStateEqualsModel(seed: UInt64) throws {
        var run = try ReplayRun(seed: seed)
        try run.execute()
    }
}

/// What the store should hold.
private struct ReplayModel {
    /// Live rows per entity.
    var rows: [[PrimaryKey: Row]] = [[:], [:]]
    /// Every committed transaction as history must show it.
    var history: [HistoryTransaction] = []
    /// History at or below this sequence is deleted.
    var floor: UInt64 = 0
    /// The highest key ever committed per entity.
    var highestKeys: [Int64] = [0, 0]

    var lastSequence: UInt64 { UInt64(history.count) }
}

/// One random sequence against one store.
private struct ReplayRun {
    let seed: UInt64
    var random: SplitMix64
    let directory = TemporaryDirectory()
    let url: URL
    var configuration: StoreConfiguration
    var store: Store?
    var model = ReplayModel()
    var log: [String] = []

    init(seed: UInt64) throws {
        self.seed = seed
        random = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 17)
        url = directory.store()
        configuration = TestSchema.configuration()
        configuration.segmentSize = [1 << 10, 2 << 10, 4 << 10, 16 << 10, 64 << 10].randomElement(using: &random)!
        configuration.blockSize = [128, 512, 4 << 10, 16 << 10].randomElement(using: &random)!
        configuration.historyTracking = Int.random(in: 0..<6, using: &random) != 0
        configuration.logger.logLevel = .critical
        store = try Store.open(at: url, schema: ReplayPropertyTests.schema, configuration: configuration)
        log.append(
            "seed \(seed): segmentSize \(configuration.segmentSize), blockSize \(configuration.blockSize), history \(configuration.historyTracking)"
        )
    }

    /// A Folder or File row with random values.
    mutating func randomRow(_ entity: Int) -> Row {
        func maybe(_ value: Value) -> Value { Int.random(in: 0..<4, using: &random) == 0 ? .null : value }
        if entity == ReplayPropertyTests.folder {
            return Row([
                .string(["docs", "src", "", "ü", "tmp", "zz"].randomElement(using: &random)!),
                maybe(.int(Int64.random(in: -5...5, using: &random))),
                maybe(.string(String(repeating: "t", count: Int.random(in: 0...40, using: &random)))),
            ])
        }
        let folders = Array(model.rows[ReplayPropertyTests.folder].keys)
        return Row([
            maybe(.int(Int64.random(in: 0...9, using: &random))),
            folders.isEmpty ? .null : maybe(.reference(folders.randomElement(using: &random)!)),
            maybe(
                .data(
                    Data(
                        (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random)
                        }))),
            .string("file \(random.next() % 100)"),
        ])
    }

    /// The tombstone a delete of `row` leaves.
    static func tombstone(_ entity: Int, _ row: Row) -> Row? {
        let keep = ReplayPropertyTests.schema.entities[entity].tombstoneColumns
        guard !keep.isEmpty else { return nil }
        var tombstone = Row(Array(repeating: .null, count: row.count))
        for column in keep { tombstone[column] = row[column] }
        return tombstone
    }

    /// Builds and commits one random transaction; sometimes one that must be refused.
    mutating func randomTransaction() throws {
        let sequence = model.lastSequence + 1
        var transaction = Transaction(
            author: Bool.random(using: &random) ? "author \(sequence % 3)" : nil,
            contextName: Bool.random(using: &random) ? nil : "context")
        transaction.timestamp = Date(timeIntervalSinceReferenceDate: 1_000 + Double(sequence))
        var rows = model.rows
        var changes: [HistoryChange] = []
        var highest = model.highestKeys
        var touched: [EntityKey] = []
        for _ in 0..<Int.random(in: 1...5, using: &random) {
            let entity = Int.random(in: 0...1, using: &random)
            let columns = ReplayPropertyTests.schema.entities[entity].columns.count
            // Half of the time, work on a key this transaction already touched.
            var live = Array(rows[entity].keys)
            let again = touched.filter { $0.entity == entity && rows[entity][$0.key] != nil }.map(\.key)
            if !again.isEmpty && Bool.random(using: &random) { live = again }
            let choice = Int.random(in: 0..<10, using: &random)
            if choice < 4 || live.isEmpty {
                let key = store!.allocateKeys(for: entity).lowerBound
                let row = randomRow(entity)
                transaction.insert(entity, key: key, row: row)
                rows[entity][key] = row
                highest[entity] = max(highest[entity], key)
                changes.append(
                    HistoryChange(kind: .insert, entity: entity, key: key, changedColumns: Array(0..<columns), row: row)
                )
                touched.append(EntityKey(entity: entity, key: key))
            } else if choice < 8 {
                let key = live.randomElement(using: &random)!
                let old = rows[entity][key]!
                var row = old
                let fresh = randomRow(entity)
                for column in 0..<columns where Bool.random(using: &random) { row[column] = fresh[column] }
                var changed = (0..<columns).filter { row[$0] != old[$0] }
                if Int.random(in: 0..<5, using: &random) == 0 {
                    changed = Array(Set(changed + [Int.random(in: 0..<columns, using: &random)])).sorted()
                }
                transaction.update(entity, key: key, row: row, changedColumns: changed)
                rows[entity][key] = row
                changes.append(
                    HistoryChange(
                        kind: .update, entity: entity, key: key, changedColumns: changed, row: row, previousRow: old))
                touched.append(EntityKey(entity: entity, key: key))
            } else {
                let key = live.randomElement(using: &random)!
                transaction.delete(entity, key: key)
                changes.append(
                    HistoryChange(
                        kind: .delete, entity: entity, key: key, changedColumns: [], row: nil,
                        tombstone: Self.tombstone(entity, rows[entity][key]!), previousRow: rows[entity][key]!))
                rows[entity][key] = nil
                touched.append(EntityKey(entity: entity, key: key))
            }
        }
        if Int.random(in: 0..<12, using: &random) == 0 {
            // A conflicting operation at the end: nothing of the transaction may be written.
            let entity = Int.random(in: 0...1, using: &random)
            let missing = store!.allocateKeys(for: entity).lowerBound
            if let live = rows[entity].keys.randomElement(using: &random), Bool.random(using: &random) {
                transaction.insert(entity, key: live, row: randomRow(entity))
            } else if Bool.random(using: &random) {
                transaction.delete(entity, key: missing)
            } else {
                transaction.update(entity, key: missing, row: randomRow(entity), changedColumns: [0])
            }
            log.append("refused \(describe(transaction))")
            do {
                try store!.commit(transaction)
                Issue.record("seed \(seed): a conflicting transaction was committed\n\(log.joined(separator: "\n"))")
            } catch let error as StoreError {
                #expect(error.code == .keyConflict, "seed \(seed): \(error)\n\(log.joined(separator: "\n"))")
            }
            #expect(store!.lastSequence == model.lastSequence, "seed \(seed): a refused transaction took a sequence")
            return
        }
        log.append("commit \(sequence): \(describe(transaction))")
        let committed: UInt64
        do {
            committed = try store!.commit(transaction)
        } catch {
            Issue.record("seed \(seed): commit failed: \(error)\n--- log:\n\(log.suffix(60).joined(separator: "\n"))")
            throw error
        }
        #expect(committed == sequence, "seed \(seed)")
        model.rows = rows
        model.highestKeys = highest
        model.history.append(
            HistoryTransaction(
                sequence: sequence, timestamp: transaction.timestamp, author: transaction.author,
                contextName: transaction.contextName, bundleID: transaction.bundleID, processID: transaction.processID,
                changes: changes))
    }

    func describe(_ transaction: Transaction) -> String {
        transaction.operations.map { operation -> String in
            switch operation {
            case .insert(let entity, let key, _): return "insert \(entity):\(key)"
            case .update(let entity, let key, _, let changed): return "update \(entity):\(key) \(changed)"
            case .delete(let entity, let key): return "delete \(entity):\(key)"
            }
        }.joined(separator: ", ")
    }

    /// How the store differs from the model; empty when it does not.
    func differences(_ store: Store) throws -> [String] {
        var found: [String] = []
        for entity in 0...1 {
            var scanned: [PrimaryKey: Row] = [:]
            try store.scan(entity) { key, row in
                if scanned.updateValue(row, forKey: key) != nil {
                    found.append("entity \(entity): scan returned \(key) twice")
                }
            }
            let expected = model.rows[entity]
            if scanned != expected {
                let keys = Set(scanned.keys).union(expected.keys).filter { scanned[$0] != expected[$0] }.sorted()
                found.append("entity \(entity): scan differs at keys \(keys.prefix(10))")
            }
            if store.count(entity) != expected.count {
                found.append("entity \(entity): count \(store.count(entity)), expected \(expected.count)")
            }
            for key in 1...max(1, model.highestKeys[entity]) {
                let row = try store.read(entity, key: key)
                if row != expected[key] {
                    found.append(
                        "entity \(entity): read of \(key) gives \(String(describing: row)), expected \(String(describing: expected[key]))"
                    )
                }
                if try store.contains(entity, key: key) != (expected[key] != nil) {
                    found.append("entity \(entity): contains(\(key)) is wrong")
                }
            }
            for column in ReplayPropertyTests.schema.entities[entity].indexedColumns {
                let pairs = expected.map { (value: $0.value[column], key: $0.key) }.sorted {
                    $0.value < $1.value || (!($1.value < $0.value) && $0.key < $1.key)
                }
                let nonNull = pairs.filter { !$0.value.isNull }.map(\.key)
                let null = pairs.filter { $0.value.isNull }.map(\.key)
                let all = try store.keys(entity, column: column, matching: .range(lower: nil, upper: nil))
                if all != nonNull {
                    found.append("entity \(entity) column \(column): index order \(all), expected \(nonNull)")
                }
                let nulls = try store.keys(entity, column: column, matching: .equal(.null))
                if nulls != null {
                    found.append("entity \(entity) column \(column): null keys \(nulls), expected \(null)")
                }
                for value in Set(pairs.map(\.value)) {
                    let keys = pairs.filter { $0.value == value }.map(\.key)
                    if try store.keys(entity, column: column, matching: .equal(value)) != keys
                        || store.countKeys(entity, column: column, matching: .equal(value)) != keys.count
                    {
                        found.append("entity \(entity) column \(column): keys equal to \(value) differ")
                    }
                }
                if try store.countKeys(entity, column: column, matching: .range(lower: nil, upper: nil))
                    != nonNull.count
                {
                    found.append("entity \(entity) column \(column): range count differs")
                }
            }
        }
        if store.lastSequence != model.lastSequence {
            found.append("last sequence \(store.lastSequence), expected \(model.lastSequence)")
        }
        if configuration.historyTracking {
            let history = try store.history(after: model.floor)
            let expected = Array(model.history.dropFirst(Int(model.floor)))
            if history != expected {
                let first = zip(history, expected).first { $0 != $1 }
                found.append(
                    "history after \(model.floor): sequences \(history.map(\.sequence)), expected \(expected.map(\.sequence)); first difference \(String(describing: first))"
                )
            }
            if model.floor > 0 {
                do {
                    _ = try store.history(after: model.floor - 1)
                    found.append("history after \(model.floor - 1) is still available below floor \(model.floor)")
                } catch let error as StoreError where error.code == .historyUnavailable {}
            }
        } else {
            do {
                _ = try store.history()
                found.append("history is available with tracking off")
            } catch let error as StoreError where error.code == .historyUnavailable {}
        }
        return found
    }

    /// Compares the store with the model, recording at most one issue.
    mutating func compare(_ stage: String) throws -> Bool {
        let found = try differences(store!)
        guard found.isEmpty else {
            Issue.record(
                "seed \(seed), \(stage):\n\(found.prefix(8).joined(separator: "\n"))\n--- log:\n\(log.suffix(60).joined(separator: "\n"))"
            )
            return false
        }
        return true
    }

    mutating func reopen(crash: Bool, fullReplay: Bool = false) throws {
        if !crash { try store!.close() }
        store = nil
        if fullReplay { try StoreFiles.deleteCheckpoints(url) }
        store = try Store.open(at: url, schema: ReplayPropertyTests.schema, configuration: configuration)
        for entity in 0...1 where store!.allocateKeys(for: entity).lowerBound <= model.highestKeys[entity] {
            Issue.record(
                "seed \(seed): after reopen entity \(entity) hands out a key at or below \(model.highestKeys[entity])")
        }
    }

    mutating func execute() throws {
        let length = Int.random(in: 5...45, using: &random)
        for _ in 0..<length {
            try randomTransaction()
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<8:
                log.append("checkpoint")
                try store!.checkpoint()
            case 8..<14:
                log.append("compact")
                try store!.compact()
            case 14..<19:
                let before = UInt64.random(in: 0...(model.lastSequence + 1), using: &random)
                log.append("deleteHistory(before: \(before))")
                try store!.deleteHistory(before: before)
                if before > 0 { model.floor = max(model.floor, min(before - 1, model.lastSequence)) }
            case 19..<22:
                log.append("crash and reopen")
                try reopen(crash: true)
            case 22..<24:
                log.append("close and reopen")
                try reopen(crash: false)
            default:
                break
            }
        }
        guard try compare("before reopening") else { return }
        log.append("crash and reopen at the end")
        try reopen(crash: true)
        guard try compare("after checkpoint and tail replay") else { return }
        log.append("full replay at the end")
        try reopen(crash: true, fullReplay: true)
        guard try compare("after full replay") else { return }
        try store!.close()
    }
}
