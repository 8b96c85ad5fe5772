import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Primary keys start at 1, increase, are never handed out again (across clean closes, crashes,
/// full replays and compactions that removed the rows) and are disjoint across threads.
@Suite struct KeyAllocationTests {
    static let department = TestSchema.department
    static let employee = TestSchema.employee

    static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 4 << 10
        configuration.logger.logLevel = .error
        return configuration
    }

    @Test func keysStartAtOneAndIncreasePerEntity() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store.allocateKeys(for: Self.employee) == 1...1)
        #expect(store.allocateKeys(for: Self.employee, count: 5) == 2...6)
        #expect(store.allocateKeys(for: Self.department) == 1...1)
        #expect(store.allocateKeys(for: Self.employee, count: 1000) == 7...1006)
        var previous: PrimaryKey = 1006
        for count in [1, 3, 7, 1, 100] {
            let range = store.allocateKeys(for: Self.employee, count: count)
            #expect(range.lowerBound == previous + 1 && range.count == count)
            previous = range.upperBound
        }
        #expect(store.allocateKeys(for: Self.department, count: 2) == 2...3)
        try store.close()
    }

    /// A store closed after reads only leaves its manifest as it was (no write, no sync); one
    /// closed after keys were allocated but not used writes them to the manifest, so the next
    /// open does not hand them out again.
    @Test func aCloseWritesTheManifestOnlyWhenItChanged() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var insert = Transaction()
        for key in store.allocateKeys(for: Self.employee, count: 3) {
            insert.insert(Self.employee, key: key, row: TestSchema.employee(Int(key)))
        }
        try store.commit(insert)
        try store.close()
        let manifest = url.appendingPathComponent("manifest").path
        func identity() throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: manifest)[.systemFileNumber] as? Int)
        }
        let written = try identity()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try store.read(Self.employee, key: 2) == TestSchema.employee(2))
        try store.close()
        #expect(try identity() == written, "a close after reads rewrote the manifest")

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store.allocateKeys(for: Self.employee, count: 5) == 4...8)
        try store.close()
        #expect(try identity() != written, "a close after allocating keys left the manifest as it was")
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store.allocateKeys(for: Self.employee) == 9...9)
        try store.close()
    }

    /// How the store is closed before it is opened again.
    enum Reopening: String, CaseIterable, Sendable {
        case close, crash, fullReplay
    }

    @Test(arguments: Reopening.allCases)
    func deletedAndCompactedKeysAreNeverReused(_ reopening: Reopening) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let keys = store!.allocateKeys(for: Self.employee, count: 60)
        var insert = Transaction()
        for key in keys { insert.insert(Self.employee, key: key, row: TestSchema.employee(Int(key))) }
        try store!.commit(insert)
        // The highest keys are deleted, their history dropped and compaction removes every trace.
        var removal = Transaction()
        for key in 41...60 as ClosedRange<PrimaryKey> { removal.delete(Self.employee, key: key) }
        try store!.commit(removal)
        try store!.deleteHistory(before: store!.lastSequence + 1)
        let report = try store!.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(store!.count(Self.employee) == 40)

        func reopen() throws {
            switch reopening {
            case .close:
                try store!.close()
                store = nil
            case .crash:
                store = nil
            case .fullReplay:
                try store!.close()
                store = nil
                try StoreFiles.deleteCheckpoints(url)
            }
            store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        }
        try reopen()
        #expect(store!.count(Self.employee) == 40)
        let next = store!.allocateKeys(for: Self.employee)
        #expect(next.lowerBound > 60, "\(reopening): key \(next.lowerBound) handed out again")

        // A key inserted explicitly above the allocated ones moves allocation past it.
        var explicit = Transaction()
        explicit.insert(Self.employee, key: 500, row: TestSchema.employee(500))
        explicit.insert(Self.employee, key: next.lowerBound, row: TestSchema.employee(Int(next.lowerBound)))
        try store!.commit(explicit)
        #expect(store!.allocateKeys(for: Self.employee).lowerBound == 501)
        var removeExplicit = Transaction()
        removeExplicit.delete(Self.employee, key: 500)
        try store!.commit(removeExplicit)
        try store!.deleteHistory(before: store!.lastSequence + 1)
        try store!.compact()
        try reopen()
        #expect(store!.allocateKeys(for: Self.employee).lowerBound > 501, "\(reopening)")
        #expect(
            store!.allocateKeys(for: Self.department).lowerBound == 1,
            "\(reopening): other entities keep their own keys")
        try store!.close()
    }

    @Test func keysAllocatedButNeverCommittedAreNotReusedAfterClose() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var insert = Transaction()
        insert.insert(
            Self.employee, key: store!.allocateKeys(for: Self.employee).lowerBound, row: TestSchema.employee(1))
        try store!.commit(insert)
        let unused = store!.allocateKeys(for: Self.employee, count: 10)
        #expect(unused == 2...11)
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store!.allocateKeys(for: Self.employee).lowerBound > 11)
        // Even with nothing committed since the last checkpoint.
        let more = store!.allocateKeys(for: Self.employee, count: 5)
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store!.allocateKeys(for: Self.employee).lowerBound > more.upperBound)
        try store!.close()
    }

    @Test func concurrentAllocationGivesDisjointRanges() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: Self.configuration())
        let threads = 8
        let ranges = LockedBox<[ClosedRange<PrimaryKey>]>([])
        runThreads(
            (0..<threads).map { thread in
                {
                    var random = SplitMix64(seed: UInt64(thread) + 1)
                    var mine: [ClosedRange<PrimaryKey>] = []
                    for _ in 0..<2_000 {
                        mine.append(
                            store.allocateKeys(for: Self.employee, count: Int.random(in: 1...5, using: &random)))
                    }
                    ranges.withLock { $0.append(contentsOf: mine) }
                }
            })
        let all = ranges.withLock { $0 }.sorted { $0.lowerBound < $1.lowerBound }
        #expect(all.count == threads * 2_000)
        #expect(all.first?.lowerBound == 1)
        // Sorted by start, each range begins right after the previous one ends: disjoint, no gaps.
        let gaps = zip(all, all.dropFirst()).filter { $1.lowerBound != $0.upperBound + 1 }
        #expect(gaps.isEmpty, "\(gaps.prefix(5))")
        let total = all.reduce(0) { $0 + $1.count }
        #expect(all.last?.upperBound == PrimaryKey(total))
        #expect(store.allocateKeys(for: Self.employee).lowerBound == PrimaryKey(total) + 1)
        try store.close()
    }
}
