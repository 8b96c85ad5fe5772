import Foundation
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc

/// Once the log has used half of the active segment's allocated window, the maintenance thread
/// allocates the next one and writes and syncs its zeros, so that no commit group waits for
/// them; when it cannot, commits allocate what they need themselves and nothing is lost, and a
/// failed sync of its zeros stops writes as a commit's failed sync does.
@Suite struct SpaceAheadTests {
    /// Durable (or relaxed) commits with the maintenance thread, the given seam, quiet logs.
    static func configuration(_ io: any FileIO = SystemFileIO(), durability: Durability = .durable) -> StoreConfiguration {
        var configuration = TestSchema.configuration(durability: durability)
        configuration.backgroundMaintenance = true
        configuration.io = io
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Commits transactions of 50 employees with 2 KB of random notes each until the store has
    /// appended `bytes` bytes; returns the number of employees committed, counting from `first`.
    @discardableResult
    static func commit(until bytes: Int, from first: Int, to store: Store, generator: inout SplitMix64) throws -> Int {
        var index = first
        while store.statistics.bytesWritten < bytes {
            var transaction = Transaction()
            let keys = store.allocateKeys(for: TestSchema.employee, count: 50)
            for key in keys {
                let notes = (0..<128).map { _ in String(generator.next(), radix: 16) }.joined()
                transaction.insert(TestSchema.employee, key: key, row: Row([.string("Employee \(index)"), .int(Int64(index)), .string(notes), .null]))
                index += 1
            }
            try store.commit(transaction)
        }
        return index
    }

    /// Waits up to 30 seconds for `done` (the maintenance thread's work), checking every millisecond.
    static func wait(for done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !done() {
            guard Date() < deadline else { return false }
            usleep(1000)
        }
        return true
    }

    /// The number of employees in the store at `url`, reopened.
    static func employees(at url: URL) throws -> Int {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? store.close() }
        var count = 0
        try store.scan(TestSchema.employee) { _, _ in count += 1 }
        return count
    }

    @Test func theMaintenanceThreadAllocatesTheNextWindowBeforeACommitNeedsIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let window = Store.preallocationWindow
        var generator = SplitMix64(seed: 11)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var count = try Self.commit(until: window / 2 + (64 << 10), from: 0, to: store, generator: &generator)
        #expect(store.statistics.spaceAllocations == 1, "the first commit allocated the first window")
        #expect(Self.wait { store.statistics.spaceAllocationsAhead >= 1 }, "past half the window, the next is allocated ahead")
        count = try Self.commit(until: window + window / 4, from: count, to: store, generator: &generator)
        let statistics = store.statistics
        #expect(statistics.spaceAllocations == 1, "no commit past the first window allocated space itself")
        #expect(statistics.bytesWritten > window)
        // What a kill leaves now (the files as they stand, the store still open): the log, then
        // the zeros written ahead, which recovery reads as its end.
        let image = URL(fileURLWithPath: directory.path + "/Image.strata")
        try FileManager.default.copyItem(at: url, to: image)
        #expect(try Self.employees(at: image) == count, "the copy of the open store recovers every commit")
        let recovered = try Store.open(at: image, schema: TestSchema.schema, configuration: TestSchema.configuration())
        _ = try Self.commit(until: recovered.statistics.bytesWritten + 1, from: count, to: recovered, generator: &generator)
        try recovered.close()
        #expect(try Self.employees(at: image) == count + 50, "and takes commits after it")
        try store.close()
        #expect(try Self.employees(at: url) == count)
    }

    @Test func whenTheMaintenanceThreadCannotAllocateCommitsDoAndLoseNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO(syncs: false)
        var generator = SplitMix64(seed: 12)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration(io))
        var count = try Self.commit(until: 1, from: 0, to: store, generator: &generator)
        // The disk is full for the maintenance thread's allocation.
        io.arm([.preallocate(ENOSPC)])
        count = try Self.commit(until: Store.preallocationWindow / 2 + (64 << 10), from: count, to: store, generator: &generator)
        #expect(Self.wait { io.armedFaults == 0 }, "the maintenance thread tried to allocate")
        count = try Self.commit(until: 2 * Store.preallocationWindow, from: count, to: store, generator: &generator)
        let statistics = store.statistics
        #expect(statistics.spaceAllocations + statistics.spaceAllocationsAhead >= 2, "the space past the first window was allocated")
        try store.close()
        #expect(try Self.employees(at: url) == count)
    }

    @Test func aFailedSyncOfTheZerosStopsWritesAndLosesNoCommit() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var generator = SplitMix64(seed: 13)
        // Relaxed commits do not sync: the maintenance thread's sync of the zeros is the first.
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration(io, durability: .relaxed))
        io.arm([.dataSync(EIO)])
        var count = try Self.commit(until: Store.preallocationWindow / 2 + (64 << 10), from: 0, to: store, generator: &generator)
        #expect(Self.wait { io.armedFaults == 0 }, "the maintenance thread synced the zeros")
        #expect(Self.wait {
            var transaction = Transaction()
            transaction.insert(TestSchema.employee, key: store.allocateKeys(for: TestSchema.employee, count: 1).lowerBound, row: TestSchema.employee(0))
            do {
                try store.commit(transaction)
                count += 1
                return false
            } catch let error as StoreError {
                return error.code == .failStopped
            } catch {
                return false
            }
        }, "the store refuses writes after the failed sync")
        try? store.close()
        #expect(try Self.employees(at: url) == count, "every commit acknowledged before the failure reads back")
    }
}
#endif
