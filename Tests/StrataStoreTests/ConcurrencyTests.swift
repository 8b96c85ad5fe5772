import Foundation
import StrataTestSupport
import Synchronization
import Testing
@testable import StrataStore

/// Readers, writers and compaction at once; group commit from many threads.
@Suite struct ConcurrencyTests {
    static let counter = 0
    /// Counter's columns.
    static let version = 0, check = 1, payload = 2

    /// One entity whose rows say, three times over, which version of which key they are.
    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Counter",
            columns: [
                ColumnSchema(name: "version", type: .int64, isNullable: false, isIndexed: true),
                ColumnSchema(name: "check", type: .string, isNullable: false),
                ColumnSchema(name: "payload", type: .binary, isNullable: false),
            ])
    ])

    /// The row image of `key` at `version`: every column derives from both.
    static func row(_ key: PrimaryKey, _ version: Int64) -> Row {
        var state = UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: version)
        let length = 60 + Int(state % 200)
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        for _ in 0..<length {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 59))  // a few distinct bytes: compresses partly
        }
        return Row([.int(version), .string("key \(key) version \(version)"), .data(Data(bytes))])
    }

    /// The version a row image holds, or `nil` when its columns disagree (a torn or foreign image).
    static func validVersion(_ key: PrimaryKey, _ row: Row) -> Int64? {
        guard case .int(let version) = row[version], row == Self.row(key, version) else { return nil }
        return version
    }

    static func configuration(durability: Durability = .relaxed) -> StoreConfiguration {
        var configuration = TestSchema.configuration(durability: durability)
        configuration.segmentSize = 32 << 10
        configuration.blockSize = 2 << 10
        configuration.historyTracking = false
        configuration.cacheSize = 256 << 10
        // Compaction installs its moved rows a few at a time, the readers and writers between.
        configuration.movesPerLockHold = 7
        configuration.logger.logLevel = .error
        return configuration
    }

    /// Checks that the store holds exactly `expected` (key to version), through reads, a scan
    /// and the version index.
    static func checkContents(_ store: Store, _ expected: [PrimaryKey: Int64], _ stage: Comment) throws {
        var wrong = 0
        for (key, version) in expected where try store.read(counter, key: key) != row(key, version) { wrong += 1 }
        #expect(wrong == 0, "\(stage): \(wrong) of \(expected.count) rows do not read back their last version")
        var scanned: [PrimaryKey: Int64] = [:]
        try store.scan(counter) { key, row in scanned[key] = validVersion(key, row) ?? -1 }
        #expect(scanned == expected, "\(stage): scan")
        #expect(store.count(counter) == expected.count, "\(stage): count")
        let indexOrder = expected.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
        #expect(
            try store.keys(counter, column: version, matching: .range(lower: nil, upper: nil)) == indexOrder,
            "\(stage): version index")
    }

    @Test func readersSeeCommittedImagesWhileWritersCommitAndCompactionRuns() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        let rowCount = 400
        let keys = store!.allocateKeys(for: Self.counter, count: rowCount)
        var insert = Transaction()
        for key in keys { insert.insert(Self.counter, key: key, row: Self.row(key, 0)) }
        try store!.commit(insert)
        // Three full rounds of updates leave most of the log dead.
        for version in 1...3 as ClosedRange<Int64> {
            for chunk in stride(from: keys.lowerBound, through: keys.upperBound, by: 50) {
                var transaction = Transaction()
                for key in chunk..<min(chunk + 50, keys.upperBound + 1) {
                    transaction.update(Self.counter, key: key, row: Self.row(key, version), changedColumns: [0, 1, 2])
                }
                try store!.commit(transaction)
            }
        }
        #expect(store!.segments().count > 3)
        let bytesBefore = StoreFiles.segmentFileBytes(url)

        let shared = store!
        let writers = 2
        let churnBase = keys.upperBound + 1
        let finished = ConcurrencyCounter()
        let problems = LockedBox<[String]>([])
        let committed = LockedBox<[PrimaryKey: Int64]>([:])
        let reads = ConcurrencyCounter()
        let compactions = ConcurrencyCounter()
        let report: @Sendable (String) -> Void = { problem in
            problems.withLock { if $0.count < 20 && !$0.contains(problem) { $0.append(problem) } }
        }

        var bodies: [@Sendable () -> Void] = []
        for writer in 0..<writers {
            bodies.append {
                var random = SplitMix64(seed: UInt64(writer) + 1)
                var versions = [PrimaryKey: Int64]()
                for key in keys where Int(key) % writers == writer { versions[key] = 3 }
                let owned = versions.keys.sorted()
                for _ in 0..<300 {
                    var transaction = Transaction()
                    var changes: [PrimaryKey: Int64] = [:]
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let key = owned.randomElement(using: &random)!
                        let next = (changes[key] ?? versions[key]!) + 1
                        changes[key] = next
                        transaction.update(Self.counter, key: key, row: Self.row(key, next), changedColumns: [0, 1, 2])
                    }
                    do {
                        try shared.commit(transaction)
                        versions.merge(changes) { $1 }
                    } catch {
                        report("writer \(writer): \(error)")
                    }
                }
                committed.withLock { $0.merge(versions) { $1 } }
                finished.add(1)
            }
        }
        // One more writer inserts new rows and deletes them again, so compaction meets deletes.
        bodies.append {
            var random = SplitMix64(seed: 99)
            var live: [PrimaryKey: Int64] = [:]
            for _ in 0..<150 {
                var transaction = Transaction()
                let key = shared.allocateKeys(for: Self.counter).lowerBound
                transaction.insert(Self.counter, key: key, row: Self.row(key, 100))
                var removed: PrimaryKey?
                if live.count > 20, let victim = live.keys.randomElement(using: &random) {
                    transaction.delete(Self.counter, key: victim)
                    removed = victim
                }
                do {
                    try shared.commit(transaction)
                    live[key] = 100
                    if let removed { live[removed] = nil }
                } catch {
                    report("inserter: \(error)")
                }
            }
            committed.withLock { $0.merge(live) { $1 } }
            finished.add(1)
        }
        for reader in 0..<3 {
            bodies.append {
                var random = SplitMix64(seed: 1000 + UInt64(reader))
                var seen: [PrimaryKey: Int64] = [:]
                var round = 0
                while finished.value < writers + 1 {
                    round += 1
                    let key = PrimaryKey.random(in: keys, using: &random)
                    do {
                        guard let row = try shared.read(Self.counter, key: key) else {
                            report("reader \(reader): key \(key) is missing")
                            continue
                        }
                        guard let version = Self.validVersion(key, row) else {
                            report("reader \(reader): key \(key) reads an image that is not a committed one: \(row)")
                            continue
                        }
                        if version < seen[key] ?? 0 {
                            report("reader \(reader): key \(key) went back from version \(seen[key]!) to \(version)")
                        }
                        seen[key] = version
                        reads.add(1)
                        if reader == 0 && round % 500 == 0 {
                            var scanned = Set<PrimaryKey>()
                            try shared.scan(Self.counter) { key, row in
                                if !scanned.insert(key).inserted { report("scan returned \(key) twice") }
                                if Self.validVersion(key, row) == nil { report("scan returned a bad image of \(key)") }
                            }
                            if !Set(keys).isSubset(of: scanned) { report("scan missed rows") }
                        }
                    } catch {
                        report("reader \(reader): \(error)")
                    }
                }
            }
        }
        bodies.append {
            while finished.value < writers + 1 {
                do {
                    let report = try shared.compact()
                    if report.segmentsCompacted > 0 { compactions.add(1) }
                    if compactions.value % 5 == 4 { try shared.checkpoint() }
                } catch {
                    report("compaction: \(error)")
                }
            }
        }
        runThreads(bodies)

        #expect(problems.withLock { $0 } == [])
        #expect(compactions.value > 0)
        #expect(reads.value > 0)
        let expected = committed.withLock { $0 }
        try store!.compact()
        let bytesAfter = StoreFiles.segmentFileBytes(url)
        #expect(bytesAfter < bytesBefore, "segment files: \(bytesBefore) bytes before compaction, \(bytesAfter) after")
        try Self.checkContents(store!, expected, "after the concurrent run")
        #expect(store!.allocateKeys(for: Self.counter).lowerBound == churnBase + 150)

        try store!.close()
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.checkContents(store!, expected, "after reopen")
        try store!.close()
        store = nil
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: Self.schema, configuration: Self.configuration())
        try Self.checkContents(store!, expected, "after full replay")
        try store!.close()
    }

    @Test func concurrentCommitsGetDistinctContiguousSequencesAndShareSyncs() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = Self.configuration(durability: .durable)
        configuration.historyTracking = true
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: configuration)
        let shared = store!
        let threads = 8
        let commitsPerThread = 25
        let fsyncsBefore = shared.statistics.fsyncs
        let results = LockedBox<[Commit]>([])
        let problems = LockedBox<[String]>([])
        runThreads(
            (0..<threads).map { thread in
                {
                    var mine: [Commit] = []
                    for _ in 0..<commitsPerThread {
                        let key = shared.allocateKeys(for: Self.counter).lowerBound
                        var transaction = Transaction(author: "thread \(thread)")
                        transaction.insert(Self.counter, key: key, row: Self.row(key, Int64(thread)))
                        do {
                            mine.append(Commit(sequence: try shared.commit(transaction), key: key))
                        } catch {
                            problems.withLock { $0.append("thread \(thread): \(error)") }
                        }
                    }
                    if !zip(mine, mine.dropFirst()).allSatisfy({ $0.sequence < $1.sequence }) {
                        problems.withLock { $0.append("thread \(thread): sequences not increasing") }
                    }
                    results.withLock { $0.append(contentsOf: mine) }
                }
            })
        let total = threads * commitsPerThread
        #expect(problems.withLock { $0 } == [])
        let committed = results.withLock { $0 }.sorted { $0.sequence < $1.sequence }
        #expect(committed.map(\.sequence) == Array(1...UInt64(total)))
        #expect(Set(committed.map(\.key)).count == total)
        let statistics = shared.statistics
        #expect(statistics.commits == total)
        #expect(
            statistics.fsyncs - fsyncsBefore <= total, "\(statistics.fsyncs - fsyncsBefore) fsyncs for \(total) commits"
        )
        #expect(shared.lastSequence == UInt64(total))

        func check(_ store: Store, _ stage: Comment) throws {
            #expect(store.count(Self.counter) == total, "\(stage)")
            let history = try store.history()
            #expect(history.map(\.sequence) == committed.map(\.sequence), "\(stage)")
            for (transaction, commit) in zip(history, committed) {
                #expect(transaction.changes.map(\.key) == [commit.key], "\(stage): sequence \(commit.sequence)")
                guard let row = transaction.changes.first?.row, case .int(let thread) = row[Self.version] else {
                    continue
                }
                #expect(transaction.author == "thread \(thread)", "\(stage)")
                #expect(try store.read(Self.counter, key: commit.key) == row, "\(stage)")
            }
        }
        try check(shared, "before close")
        try store!.close()
        store = try Store.open(at: url, schema: Self.schema, configuration: configuration)
        try check(store!, "after reopen")
        try store!.close()
    }

    /// `lastSequence` is read without the state's lock: a reader must never see a sequence whose
    /// commit is not applied yet (a save's checks read the rows after it), nor see it go back.
    @Test func lastSequenceNeverRunsAheadOfTheCommitsApplied() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(at: directory.store(), schema: Self.schema, configuration: Self.configuration())
        let writers = 4
        let commitsPerWriter = 150
        let finished = ConcurrencyCounter()
        let problems = LockedBox<[String]>([])
        var bodies: [@Sendable () -> Void] = (0..<writers).map { writer in
            {
                // One row a commit into an empty store: after commit `n`, `n` rows are live.
                for _ in 0..<commitsPerWriter {
                    let key = store.allocateKeys(for: Self.counter).lowerBound
                    var transaction = Transaction()
                    transaction.insert(Self.counter, key: key, row: Self.row(key, Int64(writer)))
                    do { try store.commit(transaction) } catch {
                        problems.withLock { $0.append("writer \(writer): \(error)") }
                    }
                }
                finished.add(1)
            }
        }
        bodies.append {
            var previous: UInt64 = 0
            // Until the writers are done, and once after; stops at the first problem.
            repeat {
                let sequence = store.lastSequence
                let live = store.count(Self.counter)
                if sequence < previous {
                    problems.withLock { $0.append("lastSequence went back from \(previous) to \(sequence)") }
                    return
                }
                if live < Int(sequence) {
                    problems.withLock { $0.append("lastSequence \(sequence) with \(live) rows applied") }
                    return
                }
                previous = sequence
            } while finished.value < writers
        }
        runThreads(bodies)
        #expect(problems.withLock { $0 } == [])
        #expect(store.lastSequence == UInt64(writers * commitsPerWriter))
        try store.close()
    }
}

/// A committed transaction's sequence and the key it inserted.
private struct Commit: Sendable {
    var sequence: UInt64
    var key: PrimaryKey
}

/// A counter shared between threads.
private final class ConcurrencyCounter: Sendable {
    private let atomic = Atomic<Int>(0)
    func add(_ amount: Int) { atomic.add(amount, ordering: .sequentiallyConsistent) }
    var value: Int { atomic.load(ordering: .sequentiallyConsistent) }
}
