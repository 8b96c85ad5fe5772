import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kills a `strata-torture write` process with SIGKILL at random points, reopens the store in this
/// process and checks it against what the helper printed: every printed commit with exactly its
/// rows, no half-applied commit, contiguous sequences, and a store that takes new commits.
@Suite(.serialized) struct CrashRecoveryTests {
    /// Seconds to run ``soak()``, from `STRATA_SOAK_SECONDS`; `nil` skips it.
    static let soakSeconds = ProcessInfo.processInfo.environment["STRATA_SOAK_SECONDS"].flatMap(Double.init)

    /// At least 300 kills of a writer on one store that grows, rolls segments, checkpoints and
    /// compacts; more (up to 1,500) until the kills have landed in every phase of a commit often
    /// enough, since how many do in 300 depends on how loaded the machine is.
    @Test func killedWriterRecovers() throws {
        let directory = TemporaryDirectory()
        var harness = try CrashHarness(store: directory.store("Torture"), scratch: directory.path)
        var iteration = 0
        while iteration < 300 || (iteration < 1_500 && !harness.coversEveryPhase) {
            try harness.killAndCheck(iteration: iteration)
            iteration += 1
        }
        #expect(harness.commitsSeen > 1_000, "the writers committed too little to test anything")
        #expect(harness.killsDuringCommits > 150, "too few kills landed while commits were running")
        #expect(harness.unprintedCommitsFound > 10, "too few kills landed between a commit's write and its report")
        #expect(harness.unprintedCommitsLost > 10, "too few kills landed before a begun commit was written")
    }

    /// Kills writers for `STRATA_SOAK_SECONDS` seconds, starting a fresh store every 2,000 kills.
    @Test(.enabled(if: soakSeconds != nil))
    func soak() throws {
        let deadline = ContinuousClock.now + .seconds(Self.soakSeconds ?? 0)
        var iteration = 0
        while ContinuousClock.now < deadline {
            let directory = TemporaryDirectory()
            var harness = try CrashHarness(store: directory.store("Soak"), scratch: directory.path)
            for _ in 0..<2_000 where ContinuousClock.now < deadline {
                try harness.killAndCheck(iteration: iteration)
                iteration += 1
            }
        }
    }

    /// A crash at any point of creating a store leaves a directory that opens as a new store.
    ///
    /// Creation makes the directory, `segments` and `checkpoints`, the lock file, then segment 1
    /// (header, fsync), then the manifest (`manifest.tmp`, rename). Each case is what a crash
    /// between two of those steps leaves behind.
    @Test(arguments: [
        [String](),
        ["segments/"],
        ["segments/", "checkpoints/", "lock"],
        ["segments/", "checkpoints/", "lock", "segments/00000001.log:0"],
        ["segments/", "checkpoints/", "lock", "segments/00000001.log:20"],
        ["segments/", "checkpoints/", "lock", "segments/00000001.log:32"],
        ["segments/", "checkpoints/", "lock", "segments/00000001.log:32", "manifest.tmp:0"],
        ["segments/", "checkpoints/", "lock", "segments/00000001.log:32", "manifest.tmp:100"],
    ])
    func crashWhileCreating(leftovers: [String]) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        for item in leftovers {
            if item.hasSuffix("/") {
                try FileManager.default.createDirectory(
                    atPath: url.path + "/" + item, withIntermediateDirectories: false)
            } else {
                let parts = item.split(separator: ":")
                let bytes = [UInt8](repeating: 0x5A, count: parts.count > 1 ? Int(parts[1])! : 0)
                #expect(FileManager.default.createFile(atPath: url.path + "/" + parts[0], contents: Data(bytes)))
            }
        }
        var store: Store? = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        var transaction = Transaction()
        transaction.insert(
            0, key: 1, row: Torture.row(key: 1, ModelRow(batch: 1, batchSize: 1, lastBatch: 1, version: 0)))
        #expect(try store!.commit(transaction) == 1)
        try store!.close()
        store = nil
        store = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        #expect(store!.count(0) == 1)
        #expect(store!.lastSequence == 1)
        try store!.checkpoint()
        try store!.close()
    }

    /// A directory with segments but no manifest is not taken for a half-created store: opening
    /// it fails and deletes nothing.
    @Test func segmentsWithoutManifestAreKept() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        var transaction = Transaction()
        transaction.insert(
            0, key: 1, row: Torture.row(key: 1, ModelRow(batch: 1, batchSize: 1, lastBatch: 1, version: 0)))
        try store!.commit(transaction)
        try store!.close()
        store = nil
        try FileManager.default.removeItem(atPath: url.path + "/manifest")
        let before = try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").sorted()
        let error = #expect(throws: StoreError.self) {
            _ = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").sorted() == before)
        #expect(!before.isEmpty)
    }
}

// MARK: - The torture helper's schema and rows

/// What the store holds for one torture row, apart from its key.
struct ModelRow: Hashable, CustomStringConvertible {
    /// The batch that inserted the row.
    var batch: Int64
    /// How many rows that batch inserted.
    var batchSize: Int64
    /// The batch that wrote the row last.
    var lastBatch: Int64
    /// 0 when inserted, one more at every update.
    var version: Int64

    var description: String { "batch \(batch)/\(batchSize) last \(lastBatch) v\(version)" }
}

/// A copy of `strata-torture`'s schema and row format (Sources/strata-torture/main.swift), and how
/// to find and run the helper.
enum Torture {
    /// One entity, `Item`: batch (fetch index), batchSize, lastBatch, version, payload.
    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Item",
            columns: [
                ColumnSchema(name: "batch", type: .int64, isNullable: false, isIndexed: true),
                ColumnSchema(name: "batchSize", type: .int64, isNullable: false),
                ColumnSchema(name: "lastBatch", type: .int64, isNullable: false),
                ColumnSchema(name: "version", type: .int64, isNullable: false),
                ColumnSchema(name: "payload", type: .string, isNullable: false),
            ])
    ])

    /// The row the helper writes for `key` in `state`.
    static func row(key: Int64, _ state: ModelRow) -> Row {
        Row([
            .int(state.batch), .int(state.batchSize), .int(state.lastBatch), .int(state.version),
            .string(payload(key: key, version: state.version)),
        ])
    }

    /// The helper's payload of `key` at `version`.
    static func payload(key: Int64, version: Int64) -> String {
        var state = UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: version)
        var text = "\(key).\(version):"
        let words = 3 + Int(state % 23)
        for _ in 0..<words {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += String(state >> 1, radix: 16)
        }
        return text
    }

    /// The model state of a stored row, or `nil` when the row is not exactly what the helper writes.
    static func state(key: Int64, row: Row) -> ModelRow? {
        guard row.count == 5, case .int(let batch) = row[0], case .int(let size) = row[1],
            case .int(let last) = row[2], case .int(let version) = row[3]
        else { return nil }
        let state = ModelRow(batch: batch, batchSize: size, lastBatch: last, version: version)
        return self.row(key: key, state) == row ? state : nil
    }

    /// The configuration the tests open torture stores with: the helper's sizes, no background thread.
    static func testConfiguration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.segmentSize = 128 << 10
        configuration.checkpointInterval = 64 << 10
        configuration.blockSize = 2 << 10
        configuration.logger.logLevel = .error
        return configuration
    }

    /// The `strata-torture` executable: `STRATA_TORTURE` if set, else the one built next to this
    /// test binary.
    static func executable() throws -> String {
        try ProcessInfo.processInfo.environment["STRATA_TORTURE"] ?? BuiltExecutable.url(named: "strata-torture").path
    }
}

// MARK: - The kill-and-check loop

/// One commit as the helper printed it.
struct PrintedBatch: Equatable {
    /// An update of `key` to `version`.
    struct Update: Equatable {
        var key: Int64
        var version: Int64
    }

    var id: Int64
    var inserts: [Int64]
    var updates: [Update]
    var deletes: [Int64]

    /// Parses the `i=... u=... d=...` fields of a line.
    init?(id: Int64, fields: ArraySlice<Substring>) {
        guard fields.count == 3 else { return nil }
        func list(_ field: Substring, _ name: String) -> [Substring]? {
            guard field.hasPrefix(name + "=") else { return nil }
            let items = field.dropFirst(name.count + 1)
            return items == "-" ? [] : items.split(separator: ",")
        }
        let fields = Array(fields)
        guard let inserts = list(fields[0], "i")?.compactMap({ Int64($0) }),
            let updates = list(fields[1], "u")?.compactMap({ item -> Update? in
                let parts = item.split(separator: ":")
                guard parts.count == 2, let key = Int64(parts[0]), let version = Int64(parts[1]) else { return nil }
                return Update(key: key, version: version)
            }),
            let deletes = list(fields[2], "d")?.compactMap({ Int64($0) }),
            !inserts.isEmpty
        else { return nil }
        self.id = id
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
    }

    /// The changes a history transaction of this batch lists: inserts, updates, deletes, in order.
    var changes: [String] {
        inserts.map { "insert \($0)" } + updates.map { "update \($0.key)" } + deletes.map { "delete \($0)" }
    }
}

/// A failure of the crash harness, with what is needed to look into it.
struct CrashCheckFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs the helper against one store directory again and again, keeping a model of what the store
/// must hold.
struct CrashHarness {
    /// The store directory.
    let store: URL
    /// Where child stderr files go.
    let scratch: String
    /// The helper binary.
    let executable: String
    /// What every live row must be, by key.
    var model: [Int64: ModelRow] = [:]
    /// The sequence number of the newest commit known.
    var lastSequence: UInt64 = 0
    /// Commits printed by the helper so far.
    var commitsSeen = 0
    /// Kills that came after the helper's first commit of the run.
    var killsDuringCommits = 0
    /// Commits begun but not printed when the helper was killed that recovery found whole.
    var unprintedCommitsFound = 0
    /// Commits begun but not printed when the helper was killed that recovery found not at all.
    var unprintedCommitsLost = 0

    /// Whether the kills so far landed in every phase often enough: the four counts
    /// `killedWriterRecovers` requires.
    var coversEveryPhase: Bool {
        commitsSeen > 1_000 && killsDuringCommits > 150 && unprintedCommitsFound > 10 && unprintedCommitsLost > 10
    }

    init(store: URL, scratch: String) throws {
        self.store = store
        self.scratch = scratch
        executable = try Torture.executable()
    }

    /// Starts the helper, kills it at a random point, reopens the store and checks it.
    mutating func killAndCheck(iteration: Int) throws {
        var random = SplitMix64(seed: UInt64(iteration) &* 0x2545_F491_4F6C_DD1D &+ 17)
        let seed = iteration + 1
        let child = try ChildProcess(
            executable, ["write", store.path, "--seed", String(seed)],
            stderrPath: scratch + "/torture-\(iteration % 2).err")
        if iteration == 0 || Int.random(in: 0..<10, using: &random) < 3 {
            // Anywhere: while the helper starts, creates or recovers the store, or commits.
            usleep(UInt32.random(in: 0...(iteration == 0 ? 15_000 : 30_000), using: &random))
        } else {
            guard child.waitForOutput("\ncommit ", timeout: .seconds(30)) else {
                child.sigkill()
                let exit = child.wait()
                throw failure(
                    iteration, "the helper made no commit (\(exit)); stderr:\n\(child.stderrTail)",
                    output: child.outputText)
            }
            killsDuringCommits += 1
            usleep(UInt32.random(in: 0...40_000, using: &random))
        }
        child.sigkill()
        let exit = child.wait()
        let output = child.outputText
        guard exit == .signalled(SIGKILL) else {
            throw failure(
                iteration, "the helper \(exit) before it was killed; stderr:\n\(child.stderrTail)", output: output)
        }
        do {
            try check(iteration: iteration, output: output, random: &random)
        } catch let error as CrashCheckFailure {
            throw failure(iteration, error.description, output: output)
        } catch {
            throw failure(iteration, "\(error)", output: output)
        }
    }

    /// Keeps a copy of the store and the helper's output, and describes the failure.
    private func failure(_ iteration: Int, _ message: String, output: String) -> CrashCheckFailure {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("strata-crash-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(at: store, to: kept.appendingPathComponent(store.lastPathComponent))
        try? output.write(to: kept.appendingPathComponent("stdout.txt"), atomically: false, encoding: .utf8)
        return CrashCheckFailure(
            description:
                "iteration \(iteration) (seed \(iteration + 1)): \(message)\n(store and helper output kept in \(kept.path))"
        )
    }

    /// Reopens the store and checks it against the model and the helper's output.
    private mutating func check(iteration: Int, output: String, random: inout SplitMix64) throws {
        func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw CrashCheckFailure(description: message()) }
        }
        // Complete lines only: the kill may cut the last one.
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        var begun: [Int64: PrintedBatch] = [:]
        var committed: [(sequence: UInt64, batch: PrintedBatch)] = []
        for line in lines {
            let fields = line.split(separator: " ")
            if fields.first == "begin", fields.count == 5, let id = Int64(fields[1]),
                let batch = PrintedBatch(id: id, fields: fields[2...])
            {
                try require(begun.updateValue(batch, forKey: id) == nil, "batch \(id) begun twice")
            } else if fields.first == "commit", fields.count == 6, let id = Int64(fields[1]),
                let sequence = UInt64(fields[2]),
                let batch = PrintedBatch(id: id, fields: fields[3...])
            {
                try require(
                    begun.removeValue(forKey: id) == batch, "commit line of batch \(id) does not match its begin line")
                committed.append((sequence, batch))
            } else {
                throw CrashCheckFailure(description: "the helper printed an unexpected line: \(line)")
            }
        }
        commitsSeen += committed.count
        let sequences = committed.map { $0.sequence }
        try require(
            Set(sequences).count == sequences.count, "two commits printed the same sequence: \(sequences.sorted())")
        try require(
            sequences.allSatisfy { $0 > lastSequence },
            "a commit printed a sequence at or below \(lastSequence): \(sequences.sorted())")

        // Not closed on failure: closing would write a checkpoint into the store kept for study.
        var store: Store? = try Store.open(
            at: self.store, schema: Torture.schema, configuration: Torture.testConfiguration())

        // Printed commits, in sequence order; then the commits begun but not printed, whole or not at all.
        var expected = model
        var applied = committed.sorted { $0.sequence < $1.sequence }.map { $0.batch }
        for batch in applied { try apply(batch, to: &expected) }
        for batch in begun.values.sorted(by: { $0.id < $1.id }) {
            let present = try batch.inserts.filter { try store!.contains(0, key: $0) }
            try require(
                present.isEmpty || present.count == batch.inserts.count,
                "batch \(batch.id) is half-applied: \(present.count) of its \(batch.inserts.count) inserted rows are there"
            )
            if present.isEmpty {
                unprintedCommitsLost += 1
            } else {
                unprintedCommitsFound += 1
                try apply(batch, to: &expected)
                applied.append(batch)
            }
        }

        // Every row, by scan and by key, and the fetch index.
        var actual: [Int64: ModelRow] = [:]
        try store!.scan(0) { key, row in
            guard let state = Torture.state(key: key, row: row) else {
                throw CrashCheckFailure(description: "row \(key) is not a well-formed torture row: \(row)")
            }
            try require(actual.updateValue(state, forKey: key) == nil, "the scan returned key \(key) twice")
        }
        if let difference = Self.difference(expected: expected, actual: actual) {
            throw CrashCheckFailure(description: difference)
        }
        try require(store!.count(0) == expected.count, "count is \(store!.count(0)), expected \(expected.count)")
        let touched = applied.flatMap { $0.inserts + $0.updates.map(\.key) + $0.deletes }
        for key in touched + expected.keys.sorted().shuffled(using: &random).prefix(50) {
            let row = try store!.read(0, key: key)
            try require(
                row == expected[key].map { Torture.row(key: key, $0) },
                "read of key \(key) gives \(String(describing: row)), expected \(String(describing: expected[key]))")
        }
        let indexed = try store!.keys(0, column: 0, matching: .range(lower: nil, upper: nil))
        let byBatch = expected.sorted { ($0.value.batch, $0.key) < ($1.value.batch, $1.key) }.map(\.key)
        try require(
            indexed == byBatch,
            "the fetch index on batch holds \(indexed.count) keys, not the \(byBatch.count) expected, or not in order")

        // Sequences: one per commit, contiguous, each printed one where the history says.
        let last = store!.lastSequence
        try require(
            last == lastSequence + UInt64(applied.count),
            "last sequence is \(last); expected \(lastSequence) + \(applied.count) commits (\(committed.count) printed)"
        )
        let from = max(lastSequence, store!.historyFloor)
        if from < last {
            let history = try store!.history(after: from)
            try require(
                history.map(\.sequence) == Array((from + 1)...last),
                "history sequences after \(from) are \(history.map(\.sequence)), not \(from + 1)...\(last)")
            let byFirstKey = Dictionary(uniqueKeysWithValues: applied.map { ($0.inserts[0], $0) })
            let printed = Dictionary(uniqueKeysWithValues: committed.map { ($0.batch.id, $0.sequence) })
            for transaction in history {
                let changes = transaction.changes.map {
                    "\($0.kind == .insert ? "insert" : $0.kind == .update ? "update" : "delete") \($0.key)"
                }
                guard let first = transaction.changes.first, let batch = byFirstKey[first.key] else {
                    throw CrashCheckFailure(
                        description:
                            "history holds commit \(transaction.sequence) that no batch of this run made: \(changes)")
                }
                try require(
                    changes == batch.changes,
                    "history of commit \(transaction.sequence) is \(changes), batch \(batch.id) made \(batch.changes)")
                try require(
                    printed[batch.id].map { $0 == transaction.sequence } ?? true,
                    "batch \(batch.id) printed sequence \(printed[batch.id]!), the history has it at \(transaction.sequence)"
                )
            }
        }

        // The store takes new commits, with the next sequence and fresh keys.
        var transaction = Transaction(author: "crash test")
        let testBatch = -Int64(iteration + 1)
        let keys = store!.allocateKeys(for: 0, count: Int.random(in: 1...3, using: &random))
        var batchChanges: [Int64: ModelRow?] = [:]
        for key in keys {
            let row = ModelRow(batch: testBatch, batchSize: Int64(keys.count), lastBatch: testBatch, version: 0)
            transaction.insert(0, key: key, row: Torture.row(key: key, row))
            batchChanges[key] = row
        }
        if let key = expected.keys.sorted().randomElement(using: &random), let row = expected[key] {
            let updated = ModelRow(
                batch: row.batch, batchSize: row.batchSize, lastBatch: testBatch, version: row.version + 1)
            transaction.update(0, key: key, row: Torture.row(key: key, updated), changedColumns: [2, 3, 4])
            batchChanges[key] = updated
        }
        let sequence = try store!.commit(transaction)
        try require(
            sequence == last + 1, "the first commit after recovery got sequence \(sequence), expected \(last + 1)")
        for (key, row) in batchChanges {
            expected[key] = row
            try require(
                try store!.read(0, key: key) == row.map { Torture.row(key: key, $0) },
                "key \(key) does not read back after the new commit")
        }
        model = expected
        lastSequence = sequence
        // Close cleanly (sync and checkpoint) now and then; else drop the store as a crash would.
        if Int.random(in: 0..<4, using: &random) == 0 { try store!.close() }
        store = nil
    }

    /// Applies a printed batch to a model, checking that it makes sense there.
    private func apply(_ batch: PrintedBatch, to model: inout [Int64: ModelRow]) throws {
        for key in batch.inserts {
            guard model[key] == nil else {
                throw CrashCheckFailure(description: "batch \(batch.id) inserts key \(key), which exists")
            }
            model[key] = ModelRow(
                batch: batch.id, batchSize: Int64(batch.inserts.count), lastBatch: batch.id, version: 0)
        }
        for update in batch.updates {
            guard var row = model[update.key], row.version + 1 == update.version else {
                throw CrashCheckFailure(
                    description:
                        "batch \(batch.id) updates key \(update.key) to version \(update.version); the model has \(String(describing: model[update.key]))"
                )
            }
            row.version = update.version
            row.lastBatch = batch.id
            model[update.key] = row
        }
        for key in batch.deletes {
            guard model.removeValue(forKey: key) != nil else {
                throw CrashCheckFailure(
                    description: "batch \(batch.id) deletes key \(key), which the model does not have")
            }
        }
    }

    /// A description of how `actual` differs from `expected`, or `nil` when they are equal.
    static func difference(expected: [Int64: ModelRow], actual: [Int64: ModelRow]) -> String? {
        guard expected != actual else { return nil }
        let missing = expected.keys.filter { actual[$0] == nil }.sorted()
        let extra = actual.keys.filter { expected[$0] == nil }.sorted()
        let wrong = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.sorted()
        var lines = ["the store holds \(actual.count) rows, the model \(expected.count)"]
        if !missing.isEmpty {
            lines.append(
                "missing \(missing.count): "
                    + missing.prefix(10).map { "\($0) (\(expected[$0]!))" }.joined(separator: ", "))
        }
        if !extra.isEmpty {
            lines.append(
                "unexpected \(extra.count): "
                    + extra.prefix(10).map { "\($0) (\(actual[$0]!))" }.joined(separator: ", "))
        }
        if !wrong.isEmpty {
            lines.append(
                "different \(wrong.count): "
                    + wrong.prefix(10).map { "\($0) is \(actual[$0]!), expected \(expected[$0]!)" }.joined(
                        separator: ", "))
        }
        return lines.joined(separator: "\n")
    }
}
