import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Several containers of one process on one store directory share its open engine store: each
/// sees the others' saves, closing one leaves the others working, and the directory's lock is
/// released with the last. Another process still finds the store locked meanwhile.
@Suite struct SharedEngineStoreTests {
    /// The employee named `name`, fetched in `context`.
    static func employee(_ name: String, in context: ManagedObjectContext) throws -> Employee? {
        let request = Employee.fetchRequest()
        request.predicate = FetchPredicate(key: "name", .equalTo, name)
        return try context.fetch(request).first
    }

    @Test func twoContainersOnOneStoreSeeEachOthersSaves() throws {
        let folder = TemporaryDirectory()
        let first = try GraphModel.container(at: folder.store())
        let second = try GraphModel.container(at: folder.store())
        #expect(
            first.persistentStoreCoordinator.persistentStores[0].engineStore
                === second.persistentStoreCoordinator.persistentStores[0].engineStore)
        let mine = first.newBackgroundContext()
        let theirs = second.newBackgroundContext()
        try mine.performAndWait {
            let ann = RelationshipTests.employee(
                "Ann", in: mine, department: RelationshipTests.department("Research", in: mine))
            ann.salary = 100
            try mine.save()
        }
        // This context changes Ann while the other container saves another change of her.
        let stale = try mine.performAndWait {
            let ann = try #require(try Self.employee("Ann", in: mine))
            ann.notes = "stale"
            return ann
        }
        try theirs.performAndWait {
            let ann = try #require(try Self.employee("Ann", in: theirs))
            #expect(ann.department?.name == "Research")
            ann.salary = 200
            try theirs.save()
        }
        try mine.performAndWait {
            #expect { try mine.save() } throws: { ($0 as? CoreDataError)?.code == .managedObjectMerge }
            mine.rollback()
            mine.refresh(stale, mergeChanges: false)
            #expect(stale.salary == 200)
            stale.notes = "fresh"
            try mine.save()
        }
        try theirs.performAndWait { () throws in
            theirs.refreshAllObjects()
            #expect(try Self.employee("Ann", in: theirs)?.notes == "fresh")
        }
        try first.close()
        try second.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let ann = try #require(try Self.employee("Ann", in: reader))
            #expect(ann.salary == 200 && ann.notes == "fresh")
        }
        try reopened.close()
    }

    @Test func closingOneContainerLeavesTheOtherWorkingAndTheLastReleasesTheLock() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let first = try GraphModel.container(at: url)
        let second = try GraphModel.container(at: url)
        let writer = first.newBackgroundContext()
        try writer.performAndWait {
            RelationshipTests.employee("Ann", in: writer).salary = 1
            try writer.save()
        }
        try first.close()
        let context = second.newBackgroundContext()
        try context.performAndWait {
            #expect(try Self.employee("Ann", in: context)?.salary == 1)
            RelationshipTests.employee("Bob", in: context).salary = 2
            try context.save()
            #expect(try context.count(for: Employee.fetchRequest()) == 2)
        }
        let locked = try CrossProcessTests.runProbe(url.path)
        #expect(locked.status != 0, "another process finds the store locked while a container has it open")
        #expect(locked.errors.contains("cannot be opened"))

        try second.close()
        let seen = try CrossProcessTests.runProbe(url.path)
        #expect(seen.status == 0, "\(seen.errors)")
        #expect(Set(CrossProcessTests.employees(seen.report).keys) == ["Ann", "Bob"])
    }

    @Test func eachContainerKeepsItsOwnDurability() throws {
        let folder = TemporaryDirectory()
        let relaxed = try GraphModel.container(at: folder.store())
        let durable = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        durable.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.store())]
        let failure = LockedError()
        durable.loadPersistentStores { _, error in failure.set(error) }
        #expect(failure.get() == nil)
        let engine = try #require(relaxed.persistentStoreCoordinator.persistentStores[0].engineStore)
        #expect(durable.persistentStoreCoordinator.persistentStores[0].engineStore === engine)

        let before = engine.statistics.fsyncs
        let relaxedContext = relaxed.newBackgroundContext()
        try relaxedContext.performAndWait {
            RelationshipTests.employee("Relaxed", in: relaxedContext).salary = 1
            try relaxedContext.save()
        }
        #expect(engine.statistics.fsyncs == before, "a relaxed save does not sync")
        let durableContext = durable.newBackgroundContext()
        try durableContext.performAndWait {
            RelationshipTests.employee("Durable", in: durableContext).salary = 2
            try durableContext.save()
        }
        #expect(engine.statistics.fsyncs > before, "a durable save syncs")
        try relaxed.close()
        try durable.close()
    }

    @Test func anotherModelOnAnOpenStoreIsRefusedAndTheStoreKeepsWorking() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        #expect {
            try GraphModel.container(at: folder.store(), model: RelationshipTests.model())
        } throws: { ($0 as? CoreDataError)?.code == .persistentStoreIncompatibleSchema }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            RelationshipTests.employee("Ann", in: context).salary = 1
            try context.save()
            #expect(try context.count(for: Employee.fetchRequest()) == 1)
        }
        try container.close()
    }

    /// Contexts of two containers insert the same unique names at once: the shared store's save
    /// lock serializes their checks, so each name is stored once and every other insert of it fails.
    @Test func uniquenessHoldsAcrossContainersSavingAtOnce() throws {
        let tag = ModelBuilder.entity("Tag", [ModelBuilder.attribute("name", .string)])
        tag.uniquenessConstraints = [["name"]]
        let model = ModelBuilder.model([tag])
        let folder = TemporaryDirectory()
        let containers = try [
            GraphModel.container(at: folder.store(), model: model),
            GraphModel.container(at: folder.store(), model: model),
        ]
        let saved = Locked(0)
        let refused = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let context = containers[worker % 2].newBackgroundContext()
            context.performAndWait {
                for name in 0..<25 {
                    let object = ManagedObject(entity: tag, insertInto: context)
                    object.setValue("t\(name)", forKey: "name")
                    do {
                        try context.save()
                        saved.withLock { $0 += 1 }
                    } catch {
                        if (error as? CoreDataError)?.code == .managedObjectConstraintMerge {
                            refused.withLock { $0 += 1 }
                        }
                        context.rollback()
                    }
                }
            }
        }
        #expect(saved.current == 25)
        #expect(refused.current == 7 * 25)
        let context = containers[1].newBackgroundContext()
        let names = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).map {
                $0.value(forKey: "name") as! String
            }
        }
        #expect(names.sorted() == (0..<25).map { "t\($0)" }.sorted())
        for container in containers { try container.close() }
    }

    /// A container released without closing stops holding the shared store: closing the other
    /// one releases the lock.
    @Test func aContainerReleasedWithoutClosingDoesNotKeepTheStoreOpen() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        var forgotten: PersistentContainer? = try GraphModel.container(at: url)
        weak let released = forgotten
        let kept = try GraphModel.container(at: url)
        forgotten = nil
        #expect(released == nil, "nothing else holds the container")
        let context = kept.newBackgroundContext()
        try context.performAndWait {
            RelationshipTests.employee("Ann", in: context).salary = 1
            try context.save()
        }
        // Closing, not the release of the last reference, gives the directory back.
        let held = try #require(kept.persistentStoreCoordinator.persistentStores.first)
        try kept.close()
        let seen = try CrossProcessTests.runProbe(url.path)
        #expect(seen.status == 0, "\(seen.errors)")
        #expect(Set(CrossProcessTests.employees(seen.report).keys) == ["Ann"])
        withExtendedLifetime(held) {}
    }
}
