import Foundation
import StrataTestSupport
import Testing
import StrataStore
@testable import Strata

/// Replay through a coordinator into a store with a replicator: each replayed transaction goes
/// through the replicator as a save does (begin, commit with the replay cursor, end), so a
/// replicated dataset receives what was replayed; a replicator that refuses one stops the replay
/// with what came before kept, and the next replay resumes without duplicates.
@Suite struct PersistentStoreCoordinatorReplicatedReplayTests {
    /// A replicator that records its calls and the transactions it commits, and refuses the
    /// commit numbered `refusing` (from 1).
    final class RecordingReplicator: PersistentStoreReplicator {
        let calls = Locked<[String]>([])
        let committed = Locked<[Transaction]>([])
        let refusing: Int?

        init(refusing: Int? = nil) { self.refusing = refusing }

        func storeWillSave(_ store: PersistentStore) throws { calls.withLock { $0.append("will") } }

        func store(
            _ store: PersistentStore, commit transaction: Transaction, locally: (Transaction) throws -> UInt64
        ) throws -> UInt64 {
            calls.withLock { $0.append("commit") }
            if committed.current.count + 1 == refusing {
                throw CoreDataError(.persistentStoreSave, "the shared dataset refused the save")
            }
            let sequence = try locally(transaction)
            committed.withLock { $0.append(transaction) }
            return sequence
        }

        func storeDidEndSave(_ store: PersistentStore) { calls.withLock { $0.append("end") } }
    }

    /// A source store with three transactions: two inserts and an update; its container.
    static func source(at url: URL) throws -> PersistentContainer {
        let source = try PersistentHistoryTests.container(at: url)
        try PersistentHistoryTests.insert(["Ada", "Grace"], author: "importer", in: source)
        try PersistentHistoryTests.insert(["Linus"], author: "importer", in: source)
        let context = source.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(
                try context.fetch(FetchRequest<Employee>(entityName: "Employee")).first { $0.name == "Ada" })
            ada.salary = 90_000
            try context.save()
        }
        return source
    }

    /// The names and salaries of the employees of `container`.
    static func employees(in container: PersistentContainer) throws -> [String: Int64] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            Dictionary(
                uniqueKeysWithValues: try context.fetch(FetchRequest<Employee>(entityName: "Employee")).map {
                    ($0.name, $0.salary)
                })
        }
    }

    @Test func replayedTransactionsGoThroughTheReplicatorWithTheirCursor() throws {
        let folder = TemporaryDirectory()
        let source = try Self.source(at: folder.store("Source"))
        let sourceEngine = try #require(source.persistentStoreCoordinator.persistentStores.first?.engineStore)
        var replica = try PersistentHistoryTests.container(at: folder.store("Replica"))
        var store = try #require(replica.persistentStoreCoordinator.persistentStores.first)
        let replicator = RecordingReplicator()
        store.replicator = replicator

        #expect(try replica.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: store) == 3)
        #expect(replicator.calls.current == Array(repeating: ["will", "commit", "end"], count: 3).flatMap { $0 })
        let cursor = Store.replayConsumerName(source: sourceEngine.storeID)
        #expect(replicator.committed.current.map { $0.consumerCursors[cursor] } == [1, 2, 3])
        #expect(replicator.committed.current.map(\.operations.count) == [2, 1, 1])
        #expect(try Self.employees(in: replica) == ["Ada": 90_000, "Grace": 50_000, "Linus": 50_000])
        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: replica)
        #expect(history.map(\.author) == ["importer", "importer", nil])

        // Nothing is applied twice, nor handed to the replicator again, also after reopen.
        #expect(try replica.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: store) == 0)
        try replica.close()
        replica = try PersistentHistoryTests.container(at: folder.store("Replica"))
        store = try #require(replica.persistentStoreCoordinator.persistentStores.first)
        store.replicator = replicator
        #expect(try replica.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: store) == 0)
        #expect(replicator.committed.current.count == 3)
        try replica.close()
        try source.close()
    }

    @Test func aRefusingReplicatorStopsTheReplayAndTheNextResumesWithoutDuplicates() throws {
        let folder = TemporaryDirectory()
        let source = try Self.source(at: folder.store("Source"))
        let sourceEngine = try #require(source.persistentStoreCoordinator.persistentStores.first?.engineStore)
        let replica = try PersistentHistoryTests.container(at: folder.store("Replica"))
        let store = try #require(replica.persistentStoreCoordinator.persistentStores.first)
        let refusing = RecordingReplicator(refusing: 2)
        store.replicator = refusing

        let error = #expect(throws: CoreDataError.self) {
            try replica.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: store)
        }
        #expect(error?.code == .persistentStoreSave)
        #expect(refusing.calls.current.suffix(3) == ["will", "commit", "end"], "the refused save still ends")
        #expect(try Self.employees(in: replica) == ["Ada": 50_000, "Grace": 50_000])

        let accepting = RecordingReplicator()
        store.replicator = accepting
        #expect(try replica.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: store) == 2)
        #expect(
            accepting.committed.current.map {
                $0.consumerCursors[Store.replayConsumerName(source: sourceEngine.storeID)]
            } == [2, 3])
        #expect(try Self.employees(in: replica) == ["Ada": 90_000, "Grace": 50_000, "Linus": 50_000])
        #expect(
            try PersistentHistoryTests.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: replica)
                .count == 3)
        try replica.close()
        try source.close()
    }
}
