import Foundation
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// Instances sharing one dataset through a private PostgreSQL server.
@Suite(
    "Mirror replication", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorReplicationTests {
    @Test("two instances see each other's inserts, updates and deletes")
    func instancesSeeEachOther() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres)
        a.startTailing()
        b.startTailing()
        try a.insert("apple", count: 1)
        #expect(try await b.waitUntil { $0 == ["apple": 1] })

        let context = b.container.newBackgroundContext()
        try context.performAndWait {
            let item = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
            item.setValue(Int64(2), forKey: "count")
            try context.save()
        }
        #expect(try await a.waitUntil { $0 == ["apple": 2] })
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            for item in try context.fetch(request) { context.delete(item) }
            try context.save()
        }
        #expect(try await a.waitUntil { $0.isEmpty })
        #expect(try a.mirror.cursor() == 3 && b.mirror.cursor() == 3)
        try await a.close()
        try await b.close()
    }

    @Test("a conflicting save fails under the error policy and is merged by the others")
    func conflictsGoThroughTheMergePolicy() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres)
        b.startTailing()
        try a.insert("pear", count: 1)
        #expect(try await b.waitUntil { $0 == ["pear": 1] })
        try await b.close()
        let b2 = try MirrorInstance("b", folder: folder, postgres: postgres)

        // b2 reads the item, then a changes it: b2's save conflicts.
        let stale = b2.container.newBackgroundContext()
        let staleItem = try stale.performAndWait { try stale.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0] }
        let fresh = a.container.newBackgroundContext()
        try fresh.performAndWait {
            let item = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
            item.setValue(Int64(10), forKey: "count")
            try fresh.save()
        }
        stale.mergePolicy = .error
        let error = stale.performAndWait {
            staleItem.setValue(Int64(20), forKey: "count")
            return #expect(throws: CoreDataError.self) { try stale.save() }
        }
        #expect(error?.code == .managedObjectMerge)
        #expect(error?.detailedErrors.count == 1)
        #expect(try b2.items() == ["pear": 10])  // the save's catch-up applied a's change

        stale.mergePolicy = .mergeByPropertyObjectTrump
        try stale.performAndWait { try stale.save() }
        a.startTailing()
        #expect(try await a.waitUntil { $0 == ["pear": 20] })
        #expect(try b2.items() == ["pear": 20])

        // Under store-trump, the other instance's change wins.
        let other = a.container.newBackgroundContext()
        let otherItem = try other.performAndWait { try other.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0] }
        let winner = b2.container.newBackgroundContext()
        try winner.performAndWait {
            let item = try winner.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
            item.setValue(Int64(30), forKey: "count")
            try winner.save()
        }
        other.mergePolicy = .mergeByPropertyStoreTrump
        try other.performAndWait {
            otherItem.setValue(Int64(40), forKey: "count")
            try other.save()
        }
        #expect(try a.items() == ["pear": 30])
        try await a.close()
        try await b2.close()
    }

    @Test("a restarted instance resumes from its cursor without duplicates")
    func restartResumesExactlyOnce() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres)
        b.startTailing()
        try a.insert("one")
        #expect(try await b.waitUntil { $0.count == 1 })
        try await b.close()
        for name in ["two", "three", "four"] { try a.insert(name) }

        let reopened = try MirrorInstance("b", folder: folder, postgres: postgres)
        #expect(try reopened.mirror.cursor() == 1)
        reopened.startTailing()
        #expect(try await reopened.waitUntil { $0.count == 4 })
        #expect(try reopened.mirror.cursor() == 4)
        #expect(try reopened.items() == ["one": 0, "two": 0, "three": 0, "four": 0])
        try await reopened.close()
        try await a.close()
    }

    @Test("a new instance bootstraps from a snapshot once the log is pruned")
    func bootstrapAfterPruning() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres)
        for index in 0..<5 { try a.insert("item\(index)", count: Int64(index)) }
        let context = a.container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "item0")
            context.delete(try context.fetch(request)[0])
            try context.save()
        }
        let connection = try await a.mirror.connect()
        try await a.mirror.heartbeat(on: connection)
        let pruned = try await MirrorPruneService(mirror: a.mirror).prune(on: connection)
        try await connection.close()
        #expect(pruned == 6)

        let c = try MirrorInstance("c", folder: folder, postgres: postgres)
        c.startTailing()
        #expect(try await c.waitUntil { $0 == ["item1": 1, "item2": 2, "item3": 3, "item4": 4] })
        #expect(try c.mirror.cursor() == 6)
        try c.insert("item5", count: 5)
        a.startTailing()
        #expect(try await a.waitUntil { $0.count == 5 })
        try await c.close()
        try await a.close()
    }
}
