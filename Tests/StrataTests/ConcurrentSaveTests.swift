import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Contexts saving at the same moment: their saves share the engine's group commit (fewer
/// `fdatasync`s than commits), lose nothing, and resolve conflicts and uniqueness constraints
/// exactly as the same saves run one after another would.
@Suite struct ConcurrentSaveTests {
    /// A container with one durable Strata store at `url` (every save waits for `fdatasync`).
    static func durableContainer(
        at url: URL, model: ManagedObjectModel = GraphModel.make()
    ) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Company", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.durability = .durable
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        return container
    }

    /// Runs `body(worker, round)` on `workers` threads of their own for `rounds` rounds; every
    /// round starts on all threads together (a barrier), so that their saves overlap.
    static func together(_ workers: Int, rounds: Int, _ body: @escaping @Sendable (Int, Int) -> Void) {
        let barrier = NSCondition()
        nonisolated(unsafe) var arrived = 0
        nonisolated(unsafe) var generation = 0
        let done = DispatchGroup()
        for worker in 0..<workers {
            done.enter()
            Thread.detachNewThread {
                for round in 0..<rounds {
                    barrier.lock()
                    let mine = generation
                    arrived += 1
                    if arrived == workers {
                        arrived = 0
                        generation += 1
                        barrier.broadcast()
                    } else {
                        while generation == mine { barrier.wait() }
                    }
                    barrier.unlock()
                    body(worker, round)
                }
                done.leave()
            }
        }
        done.wait()
    }

    /// The employee named `name`, fetched in `context`.
    static func employee(_ name: String, in context: ManagedObjectContext) throws -> Employee? {
        let request = Employee.fetchRequest()
        request.predicate = FetchPredicate(key: "name", .equalTo, name)
        return try context.fetch(request).first
    }

    @Test func sixteenContextsSavingAtOnceShareSyncsAndLoseNothing() throws {
        let folder = TemporaryDirectory()
        let container = try Self.durableContainer(at: folder.store())
        let engine = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
        let contexts = (0..<16).map { _ in container.newBackgroundContext() }
        let acknowledged = Locked<[String]>([])
        let failures = Locked<[String]>([])
        let before = engine.statistics
        Self.together(16, rounds: 8) { worker, round in
            let context = contexts[worker]
            context.performAndWait {
                let name = "c\(worker)-\(round)"
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = Int64(round)
                do {
                    try context.save()
                    acknowledged.withLock { $0.append(name) }
                } catch {
                    failures.withLock { $0.append("\(name): \(error)") }
                }
            }
        }
        let after = engine.statistics
        #expect(failures.current == [])
        #expect(acknowledged.current.count == 128)
        let commits = after.commits - before.commits
        #expect(commits == 128, "one commit per save")
        #expect(after.fsyncs - before.fsyncs < commits, "overlapping durable saves share fdatasyncs")
        #expect(after.commitGroups - before.commitGroups < commits, "overlapping saves share log writes")
        try container.close()

        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        let names = try reader.performAndWait { try reader.fetch(Employee.fetchRequest()).map(\.name) }
        #expect(names.count == 128)
        #expect(Set(names) == Set(acknowledged.current))
        try reopened.close()
    }

    /// Sixteen contexts change one object they all read before any of them saved.
    static func raceOnOneEmployee(
        policy: MergePolicyType, at url: URL
    ) throws -> (results: [Int: Result<Int64, CoreDataError>], stored: Int64) {
        let container = try Self.durableContainer(at: url)
        let seeder = container.newBackgroundContext()
        try seeder.performAndWait {
            let ann = Employee(context: seeder)
            ann.name = "Ann"
            try seeder.save()
        }
        let contexts = (0..<16).map { _ in container.newBackgroundContext() }
        // Each context reads Ann (her committed state) before any of them changes her.
        let ann = try contexts.map { context in
            try context.performAndWait {
                context.mergePolicy = MergePolicy(merge: policy)
                // Keeps Ann as read here (a released object would be read again when changed).
                context.retainsRegisteredObjects = true
                let ann = try #require(try Self.employee("Ann", in: context))
                #expect(ann.salary == 0)
                return ann.objectID
            }
        }
        let results = Locked<[Int: Result<Int64, CoreDataError>]>([:])
        Self.together(16, rounds: 1) { worker, _ in
            let context = contexts[worker]
            context.performAndWait {
                let mine = context.object(with: ann[worker]) as! Employee
                mine.salary = Int64(1000 + worker)
                do {
                    try context.save()
                    let salary = mine.salary
                    results.withLock { $0[worker] = .success(salary) }
                } catch {
                    results.withLock {
                        $0[worker] = .failure(error as? CoreDataError ?? CoreDataError(.coreData, "\(error)"))
                    }
                }
            }
        }
        try container.close()
        let reopened = try GraphModel.container(at: url)
        let reader = reopened.newBackgroundContext()
        let stored = try reader.performAndWait { try #require(try Self.employee("Ann", in: reader)).salary }
        try reopened.close()
        return (results.current, stored)
    }

    /// Under the `.error` policy the first save wins and every other one fails with a merge
    /// conflict, as when they run one after another.
    @Test func conflictingUpdatesFailAsInASerialRun() throws {
        let folder = TemporaryDirectory()
        let (results, stored) = try Self.raceOnOneEmployee(policy: .errorMergePolicyType, at: folder.store())
        #expect(results.count == 16)
        let winners = results.compactMap { worker, result in (try? result.get()).map { _ in worker } }
        #expect(winners.count == 1)
        let losers = results.values.compactMap { result -> CoreDataError.Code? in
            if case .failure(let error) = result { return error.code }
            return nil
        }
        #expect(losers == Array(repeating: .managedObjectMerge, count: 15))
        #expect(stored == Int64(1000 + (winners.first ?? -1)), "the winner's change is the one stored")
    }

    /// Under a store-trump policy the first save wins and each later one takes the stored value
    /// of the conflicting property, as when they run one after another: every context ends with
    /// the first saver's salary.
    @Test func conflictingUpdatesMergeAsInASerialRun() throws {
        let folder = TemporaryDirectory()
        let (results, stored) = try Self.raceOnOneEmployee(
            policy: .mergeByPropertyStoreTrumpMergePolicyType, at: folder.store())
        let salaries = try results.values.map { try $0.get() }
        #expect(salaries.count == 16)
        #expect(Set(salaries) == [stored], "every save resolved against the first one")
        #expect((1000..<1016).contains(stored))
    }

    /// Sixteen contexts insert an object with the same unique name at once: whatever the policy
    /// does, the store never holds two rows with one unique value.
    @Test(arguments: [
        MergePolicyType.errorMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .mergeByPropertyStoreTrumpMergePolicyType,
    ])
    func concurrentInsertsOfOneUniqueValueKeepOneRow(policy: MergePolicyType) throws {
        let tag = ModelBuilder.entity(
            "Tag", [ModelBuilder.attribute("name", .string), ModelBuilder.attribute("owner", .integer64)])
        tag.uniquenessConstraints = [["name"]]
        let model = ModelBuilder.model([tag])
        let folder = TemporaryDirectory()
        let container = try Self.durableContainer(at: folder.store(), model: model)
        let saved = Locked<[Int]>([])
        let refused = Locked<[CoreDataError.Code?]>([])
        Self.together(16, rounds: 1) { worker, _ in
            let context = container.newBackgroundContext()
            context.performAndWait {
                context.mergePolicy = MergePolicy(merge: policy)
                let object = ManagedObject(entity: tag, insertInto: context)
                object.setValue("shared", forKey: "name")
                object.setValue(Int64(worker), forKey: "owner")
                do {
                    try context.save()
                    saved.withLock { $0.append(worker) }
                } catch {
                    refused.withLock { $0.append((error as? CoreDataError)?.code) }
                }
            }
        }
        if policy == .errorMergePolicyType {
            #expect(saved.current.count == 1)
            #expect(refused.current == Array(repeating: .managedObjectConstraintMerge, count: 15))
        } else {
            #expect(saved.current.count == 16, "a merging policy resolves every conflict: \(refused.current)")
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store(), model: model)
        let reader = reopened.newBackgroundContext()
        let owners = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).map { $0.value(forKey: "owner") as? Int64 }
        }
        #expect(owners.count == 1)
        let owner = try #require(owners.first ?? nil)
        #expect((0..<16).contains(owner))
        if policy == .errorMergePolicyType {
            #expect(saved.current == [Int(owner)], "the one save that succeeded is stored")
        }
        try reopened.close()
    }

    /// A context pinned to a query generation while eight others save at once keeps reading
    /// the same salaries, however often it faults them again: every commit after its pin kept the rows
    /// it replaced, including commits that were in flight when it pinned.
    @Test func aGenerationPinnedWhileContextsSaveKeepsReadingOneState() throws {
        let folder = TemporaryDirectory()
        let container = try Self.durableContainer(at: folder.store())
        let seeder = container.newBackgroundContext()
        try seeder.performAndWait {
            for worker in 0..<8 { Employee(context: seeder).name = "e\(worker)" }
            try seeder.save()
        }
        let contexts = (0..<8).map { _ in container.newBackgroundContext() }
        let problems = Locked<[String]>([])
        @Sendable func salaries(in context: ManagedObjectContext) throws -> [Int64] {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "name")]
            return try context.fetch(request).map(\.salary)
        }
        Self.together(9, rounds: 30) { worker, round in
            if worker == 8 {
                let reader = container.newBackgroundContext()
                reader.performAndWait {
                    do {
                        try reader.setQueryGenerationFrom(.current)
                        let first = try salaries(in: reader)
                        for _ in 0..<3 {
                            // Faults again without moving to a newer generation (refreshAllObjects would).
                            for object in reader.registeredObjects { reader.refresh(object, mergeChanges: false) }
                            let again = try salaries(in: reader)
                            if again != first {
                                problems.withLock { $0.append("round \(round): \(first) then \(again)") }
                            }
                        }
                    } catch {
                        problems.withLock { $0.append("round \(round): \(error)") }
                    }
                }
                return
            }
            let context = contexts[worker]
            context.performAndWait {
                do {
                    let employee = try #require(try Self.employee("e\(worker)", in: context))
                    employee.salary = Int64(round + 1)
                    try context.save()
                } catch {
                    problems.withLock { $0.append("e\(worker), round \(round): \(error)") }
                }
            }
        }
        #expect(problems.current == [])
        let reader = container.newBackgroundContext()
        #expect(try reader.performAndWait { try salaries(in: reader) } == Array(repeating: 30, count: 8))
        try container.close()
    }
}
