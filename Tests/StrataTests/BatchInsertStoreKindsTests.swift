import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore
@testable import Strata

/// `BatchInsertRequest` into every kind of store: the engine store makes each row as it encodes
/// it; the in-memory store and a store whose replicator publishes its commits get the same
/// inserts as operations; a context pinned to an older query generation does not see them.
@Suite struct BatchInsertStoreKindsTests {
    /// Inserts employees `0..<count` in a new context of `container`; returns their IDs.
    static func insert(_ count: Int, into container: PersistentContainer) throws -> [ManagedObjectID] {
        let request = BatchInsertRequest(entityName: "Employee", objects: BatchInsertBulkTests.employees(0..<count))
        request.resultType = .objectIDs
        return try #require(try BatchInsertRequestTests.execute(request, in: container) as? [ManagedObjectID])
    }

    /// The names of the employees `ids` read from a new context of `container`, in order.
    static func names(_ ids: [ManagedObjectID], in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try ids.map { (try context.existingObject(with: $0) as! Employee).name } }
    }

    @Test func anInMemoryStoreTakesTheInserts() throws {
        let container = try CrossProcessTests.inMemoryContainer(named: "BatchInsert-\(UUID().uuidString)")
        let ids = try Self.insert(3, into: container)
        #expect(try Self.names(ids, in: container) == ["Employee 0", "Employee 1", "Employee 2"])
        #expect(try BatchInsertBulkTests.stored(in: container).count == 3)
    }

    @Test func aReplicatorGetsTheInsertsAsOneTransactionOfOperations() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        let replicator = PersistentStoreCoordinatorReplicatedReplayTests.RecordingReplicator()
        store.replicator = replicator
        let count = 3 * ParallelParts.rowsPerPart + 1
        let ids = try Self.insert(count, into: container)
        #expect(replicator.calls.current == ["will", "commit", "end"])
        let committed = replicator.committed.current
        #expect(committed.count == 1)
        #expect(committed.first?.operations.map(\.key) == ids.map { $0.primaryKey })
        #expect(try Self.names([ids[0], ids[count - 1]], in: container) == ["Employee 0", "Employee \(count - 1)"])
    }

    @Test func aContextPinnedBeforeTheInsertDoesNotSeeIt() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let seeded = try Self.insert(2, into: container)
        let pinned = container.newBackgroundContext()
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        let ids = try Self.insert(3 * ParallelParts.rowsPerPart, into: container)
        let count = try pinned.performAndWait { try pinned.count(for: Employee.fetchRequest()) }
        #expect(count == seeded.count)
        let missing = pinned.performAndWait { Result { try pinned.existingObject(with: ids[5]) } }
        #expect(throws: CoreDataError.self) { try missing.get() }
        #expect(try BatchInsertBulkTests.stored(in: container).count == seeded.count + ids.count)
    }
}
