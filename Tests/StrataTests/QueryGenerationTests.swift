import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Contexts pinned to a query generation: what they read while others save and the store
/// compacts, when they move on, and which tokens they take.
@Suite struct QueryGenerationTests {
    /// Saves Research with Ada (100), Bob (200) and Cy (300) through a new context.
    static func seed(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            for (name, salary) in [("Ada", 100), ("Bob", 200), ("Cy", 300)] {
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = Int64(salary)
                employee.department = research
            }
            try context.save()
        }
    }

    /// In another context: Ada earns 150, Bob is deleted, Dan (400) is hired, Cy leaves Research.
    static func change(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let everyone = try context.fetch(Employee.fetchRequest())
            let byName = Dictionary(uniqueKeysWithValues: everyone.map { ($0.name, $0) })
            byName["Ada"]!.salary = 150
            context.delete(byName["Bob"]!)
            byName["Cy"]!.department = nil
            let dan = Employee(context: context)
            dan.name = "Dan"
            dan.salary = 400
            try context.save()
        }
    }

    /// Names of the employees `request` finds, in order.
    static func names(_ request: FetchRequest<Employee>, in context: ManagedObjectContext) throws -> [String] {
        try context.fetch(request).map(\.name)
    }

    static func byName() -> FetchRequest<Employee> {
        let request = Employee.fetchRequest()
        request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
        return request
    }

    @Test func aPinnedContextReadsItsGenerationWhileOthersSaveAndTheStoreCompacts() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        try Self.seed(container)
        let reader = container.newBackgroundContext()
        let bobID = try reader.performAndWait {
            #expect(reader.queryGenerationToken == nil)
            try reader.setQueryGenerationFrom(.current)
            #expect(reader.queryGenerationToken != nil && reader.queryGenerationToken != .current)
            // Bob is registered as a fault before he is deleted elsewhere.
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(key: "name", .equalTo, "Bob")
            request.includesPropertyValues = false
            return try #require(try reader.fetch(request).first).objectID
        }
        try Self.change(container)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)

        try reader.performAndWait {
            #expect(try Self.names(Self.byName(), in: reader) == ["Ada", "Bob", "Cy"])
            #expect(try reader.count(for: Employee.fetchRequest()) == 3)
            let ada = try #require(try reader.fetch(Self.byName()).first)
            #expect(ada.salary == 100)
            let bob = try #require(reader.existingObject(with: bobID) as? Employee)
            #expect(bob.salary == 200 && !bob.isDeleted)
            // The fetch index on salary answers as of the generation: Ada's 150 and Dan are not there.
            let rich = Employee.fetchRequest()
            rich.predicate = FetchPredicate(key: "salary", .greaterThanOrEqualTo, Int64(150))
            rich.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
            #expect(try Self.names(rich, in: reader) == ["Bob", "Cy"])
            #expect(try reader.count(for: rich) == 2)
            let top = Employee.fetchRequest()
            top.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
            top.fetchLimit = 1
            #expect(try Self.names(top, in: reader) == ["Cy"])
            let research = try #require(try reader.fetch(Department.fetchRequest()).first)
            #expect(research.employees.map(\.name).sorted() == ["Ada", "Bob", "Cy"])
        }
        // Unpinned and refreshed, it sees the store as it is.
        try reader.performAndWait {
            try reader.setQueryGenerationFrom(nil)
            #expect(reader.queryGenerationToken == nil)
            reader.refreshAllObjects()
            #expect(try Self.names(Self.byName(), in: reader) == ["Ada", "Cy", "Dan"])
            #expect(try reader.fetch(Self.byName()).first?.salary == 150)
            let research = try #require(try reader.fetch(Department.fetchRequest()).first)
            #expect(research.employees.map(\.name) == ["Ada"])
            #expect(throws: CoreDataError.self) { try reader.existingObject(with: bobID) }
        }
    }

    @Test func theGenerationAdvancesOnSaveRefreshResetAndMerge() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        try Self.seed(container)
        let reader = container.newBackgroundContext()
        let first = try reader.performAndWait {
            try reader.setQueryGenerationFrom(.current)
            return try #require(reader.queryGenerationToken)
        }
        try Self.change(container)
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.count(for: Employee.fetchRequest()) == 3)
            reader.refreshAllObjects()
            #expect(reader.queryGenerationToken != first && reader.queryGenerationToken != nil)
            #expect(try reader.count(for: Employee.fetchRequest()) == 3)
            #expect(try Self.names(Self.byName(), in: reader) == ["Ada", "Cy", "Dan"])
        }
        // Its own save moves it to the generation of that save.
        let saved = try reader.performAndWait {
            let eve = Employee(context: reader)
            eve.name = "Eve"
            try reader.save()
            return try #require(reader.queryGenerationToken)
        }
        let writer = container.newBackgroundContext()
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: writer, queue: nil
        ) { note in
            nonisolated(unsafe) let note = note
            reader.performAndWait { reader.mergeChanges(fromContextDidSave: note) }
        }
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.count(for: Employee.fetchRequest()) == 4)
        }
        try writer.performAndWait {
            let fay = Employee(context: writer)
            fay.name = "Fay"
            try writer.save()
        }
        NotificationCenter.default.removeObserver(observer)
        try reader.performAndWait { () throws -> Void in
            #expect(reader.queryGenerationToken != saved)
            #expect(try reader.count(for: Employee.fetchRequest()) == 5)
        }
        try writer.performAndWait {
            let gus = Employee(context: writer)
            gus.name = "Gus"
            try writer.save()
        }
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.count(for: Employee.fetchRequest()) == 5)
            reader.reset()
            #expect(try reader.count(for: Employee.fetchRequest()) == 6)
        }
    }

    @Test func aTokenPinsAnotherContextOfTheSameCoordinatorOnly() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        try Self.seed(container)
        let first = container.newBackgroundContext()
        let token = try first.performAndWait {
            try first.setQueryGenerationFrom(.current)
            return try #require(first.queryGenerationToken)
        }
        try Self.change(container)
        let second = container.newBackgroundContext()
        try second.performAndWait {
            try second.setQueryGenerationFrom(token)
            #expect(second.queryGenerationToken == token)
            #expect(try Self.names(Self.byName(), in: second) == ["Ada", "Bob", "Cy"])
        }
        let elsewhere = try GraphModel.container(at: folder.store("Other"))
        defer { try? elsewhere.close() }
        let stranger = elsewhere.newBackgroundContext()
        try stranger.performAndWait { () throws -> Void in
            #expect {
                try stranger.setQueryGenerationFrom(token)
            } throws: { error in
                (error as? CoreDataError)?.code == .persistentStoreOperation
            }
            #expect(stranger.queryGenerationToken == nil)
            #expect(try stranger.count(for: Employee.fetchRequest()) == 0)
        }
        #expect(throws: CoreDataError.self) { try ManagedObjectContext(.privateQueue).setQueryGenerationFrom(.current) }
    }

    @Test func aPinnedReaderSeesNoneOfTheSavesRunningAlongsideIt() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        try Self.seed(container)
        let reader = container.newBackgroundContext()
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        let failure = LockedError()
        let writer = Thread {
            let context = container.newBackgroundContext()
            do {
                for round in 0..<40 {
                    try context.performAndWait {
                        let everyone = try context.fetch(Employee.fetchRequest())
                        for employee in everyone { employee.salary += 1 }
                        if let first = everyone.first, round.isMultiple(of: 3) { context.delete(first) }
                        let hire = Employee(context: context)
                        hire.name = "Hire \(round)"
                        hire.salary = Int64(round)
                        try context.save()
                    }
                }
            } catch {
                failure.set(error)
            }
        }
        writer.start()
        let rich = Employee.fetchRequest()
        rich.predicate = FetchPredicate(key: "salary", .greaterThan, Int64(150))
        for _ in 0..<40 {
            try reader.performAndWait { () throws -> Void in
                #expect(try reader.count(for: Employee.fetchRequest()) == 3)
                #expect(try reader.count(for: rich) == 2)
                #expect(try reader.fetch(Self.byName()).map(\.salary) == [100, 200, 300])
                // Faults again, so the next round reads the rows anew.
                for object in reader.registeredObjects { reader.refresh(object, mergeChanges: false) }
            }
        }
        while !writer.isFinished { usleep(1_000) }
        if let error = failure.get() { throw error }
        // 40 hires and 14 deletions later, unpinned, it sees them all.
        let count = try reader.performAndWait {
            try reader.setQueryGenerationFrom(nil)
            return try reader.count(for: Employee.fetchRequest())
        }
        #expect(count == 3 + 40 - 14)
    }

    @Test func inMemoryStoresKeepGenerationsToo() throws {
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription()
        description.type = InMemoryStoreType
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        try Self.seed(container)
        let reader = container.newBackgroundContext()
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        try Self.change(container)
        try reader.performAndWait {
            #expect(try Self.names(Self.byName(), in: reader) == ["Ada", "Bob", "Cy"])
            try reader.setQueryGenerationFrom(nil)
            #expect(try Self.names(Self.byName(), in: reader) == ["Ada", "Cy", "Dan"])
        }
    }
}
