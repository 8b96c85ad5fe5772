import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A small commit group's fetch-index changes wait in ``StoreState/pendingIndexChanges``, off
/// the commit path; every read of an index, every checkpoint and the maintenance thread (outside
/// the state's lock) merge them, and the indexes always answer as if each change had been merged
/// as it was committed.
@Suite struct FetchIndexPendingChangesTests {
    /// Commits `count` small transactions on employees (inserts, salary changes and deletes),
    /// mirrored in `model` (salary by key).
    static func churn(_ store: Store, _ model: inout [PrimaryKey: Int64], count: Int, _ random: inout SplitMix64) throws
    {
        for _ in 0..<count {
            var transaction = Transaction()
            var touched = Set<PrimaryKey>()
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let live = model.keys.filter { !touched.contains($0) }
                let choice = Int.random(in: 0..<10, using: &random)
                if choice < 5 || live.isEmpty {
                    let key = store.allocateKeys(for: TestSchema.employee).lowerBound
                    let salary = Int64.random(in: 0...50, using: &random)
                    transaction.insert(TestSchema.employee, key: key, row: row(key, salary))
                    model[key] = salary
                    touched.insert(key)
                } else if choice < 8 {
                    let key = live.min()!
                    let salary = Int64.random(in: 0...50, using: &random)
                    transaction.update(TestSchema.employee, key: key, row: row(key, salary), changedColumns: [1])
                    model[key] = salary
                    touched.insert(key)
                } else {
                    let key = live.randomElement(using: &random)!
                    transaction.delete(TestSchema.employee, key: key)
                    model[key] = nil
                    touched.insert(key)
                }
            }
            try store.commit(transaction)
        }
    }

    /// Commits one transaction inserting `count` employees, mirrored in `model`.
    static func insert(
        _ count: Int, into store: Store, _ model: inout [PrimaryKey: Int64], _ random: inout SplitMix64
    ) throws {
        var transaction = Transaction()
        for key in store.allocateKeys(for: TestSchema.employee, count: count) {
            let salary = Int64.random(in: 0...1_000, using: &random)
            transaction.insert(TestSchema.employee, key: key, row: row(key, salary))
            model[key] = salary
        }
        try store.commit(transaction)
    }

    /// An employee row with `salary`.
    static func row(_ key: PrimaryKey, _ salary: Int64) -> Row {
        Row([.string("Employee \(key)"), .int(salary), .null, .null])
    }

    /// The keys of `model` in the salary index's order.
    static func indexOrder(_ model: [PrimaryKey: Int64]) -> [PrimaryKey] {
        model.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
    }

    /// Whether the salary index of `store` lists `model`, in order, and counts a range of it.
    static func expectIndexMatches(_ store: Store, _ model: [PrimaryKey: Int64]) throws {
        #expect(
            try store.keys(TestSchema.employee, column: 1, matching: .range(lower: nil, upper: nil))
                == indexOrder(model))
        let upper = IndexQuery.range(lower: nil, upper: IndexBound(.int(20), inclusive: true))
        #expect(
            try store.countKeys(TestSchema.employee, column: 1, matching: upper)
                == model.values.filter { $0 <= 20 }.count)
    }

    static func pendingCount(_ store: Store) -> Int { store.state.withLock { $0.pendingIndexChanges.count } }

    @Test func smallCommitsWaitPendingUntilAnIndexIsRead() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        var random = SplitMix64(seed: 7)
        var model: [PrimaryKey: Int64] = [:]
        for _ in 0..<20 {
            try Self.churn(store, &model, count: 15, &random)
            #expect(Self.pendingCount(store) > 0)
            try Self.expectIndexMatches(store, model)
            #expect(Self.pendingCount(store) == 0)
        }
        try store.close()
    }

    @Test func aCheckpointWritesThePendingChanges() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var random = SplitMix64(seed: 11)
        var model: [PrimaryKey: Int64] = [:]
        try Self.churn(store, &model, count: 200, &random)
        #expect(Self.pendingCount(store) > 0)
        try store.checkpoint()
        #expect(Self.pendingCount(store) == 0)
        // Nothing was committed after the checkpoint: reopening takes the indexes from it alone.
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.expectIndexMatches(store, model)
        try Self.churn(store, &model, count: 50, &random)
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.expectIndexMatches(store, model)
        try store.close()
    }

    /// Runs the maintenance thread's merge (``Store/mergePendingIndexChanges()``) with its steps
    /// apart: 100 small commits, the hand-over, 40 more commits, `meanwhile`, then the end of the
    /// merge; returns the model of the rows committed.
    static func mergeWithCommitsBetweenItsSteps(
        _ store: Store, seed: UInt64, meanwhile: (Store, [PrimaryKey: Int64]) throws -> Void
    ) throws -> [PrimaryKey: Int64] {
        var random = SplitMix64(seed: seed)
        var model: [PrimaryKey: Int64] = [:]
        try churn(store, &model, count: 100, &random)
        let merge = try #require(store.state.withLock { $0.beginIndexMerge() })
        #expect(pendingCount(store) == 0)
        try churn(store, &model, count: 40, &random)
        try meanwhile(store, model)
        var indexes = merge.indexes
        merge.changes.settled().apply(to: &indexes)
        store.state.withLock { $0.finishIndexMerge((indexes, merge.merges)) }
        return model
    }

    @Test func aBackgroundMergeKeepsTheChangesCommittedMeanwhile() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let model = try Self.mergeWithCommitsBetweenItsSteps(store, seed: 13) { _, _ in }
        #expect(Self.pendingCount(store) > 0)
        try Self.expectIndexMatches(store, model)
        try store.close()
    }

    @Test func aReadDuringABackgroundMergeMergesTheChangesHandedOver() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        // The merge ends after a read merged its changes and the later ones: it is dropped.
        let model = try Self.mergeWithCommitsBetweenItsSteps(store, seed: 17) { store, model in
            try Self.expectIndexMatches(store, model)
        }
        try Self.expectIndexMatches(store, model)
        try store.close()
    }

    @Test func fewChangesToALargeIndexAreMergedInPlaceNotHandedOver() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        var random = SplitMix64(seed: 19)
        var model: [PrimaryKey: Int64] = [:]
        // One large group: merged as it is applied, into ~80 chunks an index.
        try Self.insert(40_000, into: store, &model, &random)
        #expect(Self.pendingCount(store) == 0)
        try Self.churn(store, &model, count: 30, &random)
        #expect(Self.pendingCount(store) > 0)
        let handedOver = store.state.withLock { $0.beginIndexMerge() }
        #expect(handedOver == nil)
        #expect(Self.pendingCount(store) == 0)
        try Self.expectIndexMatches(store, model)
        try store.close()
    }

    @Test func readersSeeEveryAcknowledgedCommitWhileWritersCommitAndTheThreadMerges() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.backgroundMaintenance = true
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        // Rows acknowledged so far, and the first few things the reader found missing or the
        // threads threw.
        let acknowledged = LockedBox(0)
        let failures = LockedBox<[String]>([])
        let fail: @Sendable (String) -> Void = { failure in failures.withLock { if $0.count < 3 { $0.append(failure) } }
        }
        let models = LockedBox<[PrimaryKey: Int64]>([:])
        let writersDone = LockedBox(0)
        let writers = 4
        var bodies: [@Sendable () -> Void] = (0..<writers).map { writer in
            {
                var random = SplitMix64(seed: UInt64(writer) + 100)
                var model: [PrimaryKey: Int64] = [:]
                do {
                    for _ in 0..<300 {
                        try Self.insert(10, into: store, &model, &random)
                        acknowledged.withLock { $0 += 10 }
                    }
                } catch {
                    fail("writer: \(error)")
                }
                models.withLock { $0.merge(model) { $1 } }
                writersDone.withLock { $0 += 1 }
            }
        }
        bodies.append {
            while writersDone.withLock({ $0 }) < writers {
                let before = acknowledged.withLock { $0 }
                do {
                    let seen = try store.countKeys(
                        TestSchema.employee, column: 1, matching: .range(lower: nil, upper: nil))
                    if seen < before { fail("read \(seen) rows after \(before) were acknowledged") }
                } catch {
                    fail("reader: \(error)")
                }
            }
        }
        runThreads(bodies)
        #expect(failures.withLock { $0 } == [])
        #expect(store.statistics.commits == writers * 300)
        try Self.expectIndexMatches(store, models.withLock { $0 })
        try store.close()
    }

    @Test func pendingChangesStayBoundedWithoutReads() throws {
        let directory = TemporaryDirectory()
        // Without the maintenance thread, commits merge the changes once they reach the bound.
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        var model: [PrimaryKey: Int64] = [:]
        var random = SplitMix64(seed: 3)
        var highest = 0
        while model.count < Store.pendingIndexChangesMergedInline + 1_000 {
            try Self.insert(50, into: store, &model, &random)
            highest = max(highest, Self.pendingCount(store))
        }
        #expect(highest < Store.pendingIndexChangesMergedInline)
        #expect(highest >= Store.pendingIndexChangesMergedInline - 50)
        try Self.expectIndexMatches(store, model)
        try store.close()
    }

    @Test func theMaintenanceThreadMergesPendingChanges() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.backgroundMaintenance = true
        // No checkpoint (which merges them too) during the test.
        configuration.checkpointInterval = 1 << 40
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        var model: [PrimaryKey: Int64] = [:]
        var random = SplitMix64(seed: 5)
        while model.count < 2 * Store.pendingIndexChangesMerged {
            try Self.insert(20, into: store, &model, &random)
        }
        // Each commit that brought the pending changes to the threshold woke the thread; no index
        // is read meanwhile, so without it all of them would still be pending.
        let deadline = ContinuousClock.now + .seconds(30)
        while Self.pendingCount(store) >= Store.pendingIndexChangesMerged && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(Self.pendingCount(store) < Store.pendingIndexChangesMerged)
        try Self.expectIndexMatches(store, model)
        try store.close()
    }
}
