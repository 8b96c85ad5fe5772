import Dispatch
import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Code written for Apple's Core Data compiles unchanged but for `NS`: closures that Apple's SDK
/// does not mark `@Sendable` capture the caller's variables and managed objects, the async
/// `perform` needs `try` only for a block that throws, `ManagedObjectModel(contentsOf:)` is
/// failable, `FetchPredicate(format:)` does not throw and its `%@` takes any value.
@Suite struct AppleSignatureTests {
    /// Apple's template: `loadPersistentStores` with a closure that sets a local variable.
    @Test func loadingCodeSetsTheCallersVariable() throws {
        let folder = TemporaryDirectory()
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.store())]
        var loadError: Error?
        var loaded: [PersistentStoreDescription] = []
        container.loadPersistentStores { description, error in
            loaded.append(description)
            loadError = error
        }
        #expect(loadError == nil)
        #expect(loaded.count == 1)
        try container.close()

        // A store that cannot be opened reports its error through the same closure.
        let blocked = folder.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocked)
        let failing = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        failing.persistentStoreDescriptions = [
            PersistentStoreDescription(url: blocked.appendingPathComponent("Company.strata"))
        ]
        failing.loadPersistentStores { _, error in loadError = error }
        #expect(loadError != nil)
    }

    /// `perform` and `performBackgroundTask` take closures that capture managed objects and
    /// local state, as Core Data code does.
    @Test func performTakesClosuresThatCaptureManagedObjects() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let ada = context.performAndWait { Employee(context: context) }
        var saveError: Error?
        let done = DispatchSemaphore(value: 0)
        context.perform {
            ada.name = "Ada"
            do { try context.save() } catch { saveError = error }
            done.signal()
        }
        done.wait()
        #expect(saveError == nil)
        let id = context.performAndWait { ada.objectID }

        var seen: String?
        container.performBackgroundTask { background in
            seen = (try? background.existingObject(with: id) as? Employee)?.name
            done.signal()
        }
        done.wait()
        #expect(seen == "Ada")
        try container.close()
    }

    /// The async `perform` needs `try` only for a block that throws (Core Data's `rethrows`), and
    /// its block captures managed objects.
    @Test func asyncPerformRethrows() async throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let ada = await context.perform { Employee(context: context) }
        let name = await context.perform {
            ada.name = "Ada"
            return ada.name
        }
        #expect(name == "Ada")
        let id = try await context.perform {
            try context.save()
            return ada.objectID
        }
        let enqueued = await context.perform(schedule: .enqueued) { context.hasChanges }
        #expect(!enqueued)
        var failure: (any Error)?
        do {
            try await context.perform {
                ada.salary = -1  // below the model's minimum
                try context.save()
            }
        } catch {
            failure = error
        }
        #expect(failure is CoreDataError)
        await context.perform { context.rollback() }

        let salary = try await container.performBackgroundTask { background in
            try (background.existingObject(with: id) as? Employee)?.salary
        }
        #expect(salary == 0)
        let count = await container.performBackgroundTask { background in
            (try? background.count(for: Employee.fetchRequest())) ?? -1
        }
        #expect(count == 1)
        try container.close()
    }

    /// `%@` in a format takes managed objects, object IDs, dates, UUIDs, URLs, data, arrays and
    /// sets, passed as variadic arguments.
    @Test func formatArgumentsTakeAnyValue() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let sales = Department(context: context)
            sales.name = "Sales"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.department = sales
            let grace = Employee(context: context)
            grace.name = "Grace"
            try context.save()

            let inSales = Employee.fetchRequest()
            inSales.predicate = FetchPredicate(format: "department == %@", sales)
            #expect(try context.fetch(inSales).map(\.name) == ["Ada"])
            let byIDs = Employee.fetchRequest()
            byIDs.predicate = FetchPredicate(format: "self IN %@", [grace.objectID])
            #expect(try context.fetch(byIDs).map(\.name) == ["Grace"])
            let bySet = Employee.fetchRequest()
            bySet.predicate = FetchPredicate(
                format: "name IN %@ AND department == %@", Set(["Ada", "Grace"]), sales.objectID)
            #expect(try context.fetch(bySet).map(\.name) == ["Ada"])
        }
        let now = Date()
        let uuid = UUID()
        let url = URL(string: "https://example.com/a")!
        let record: [String: Any] = [
            "when": now.addingTimeInterval(-60), "uuid": uuid, "url": url, "data": Data([1, 2]),
        ]
        #expect(FetchPredicate(format: "when < %@", now).evaluate(with: record))
        #expect(FetchPredicate(format: "uuid == %@ AND url == %@", uuid, url).evaluate(with: record))
        #expect(FetchPredicate(format: "data == %@", Data([1, 2])).evaluate(with: record))
        #expect(!FetchPredicate(format: "uuid == %@", UUID()).evaluate(with: record))
        try container.close()
    }

    /// A malformed format stops the process, as `NSPredicate(format:)` raises; the checked form
    /// throws for formats from outside the program.
    @Test func aMalformedFormatStopsTheProcessAndTheCheckedFormThrows() async throws {
        await #expect(processExitsWith: .failure) {
            _ = FetchPredicate(format: "name == ")
        }
        let error = #expect(throws: FetchPredicateError.self) { try FetchPredicate(checkedFormat: "name == ") }
        #expect(error?.code == .malformedFormat)
    }

    /// Generic code creates objects of the type it is given: `init(context:)` is required.
    @Test func genericCodeCreatesObjectsOfItsType() throws {
        func make<T: ManagedObject>(_ type: T.Type, in context: ManagedObjectContext) -> T { T(context: context) }
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = make(Department.self, in: context)
            department.name = "Sales"
            #expect(context.insertedObjects.contains(department))
            try context.save()
        }
        try container.close()
    }

    /// Xcode's loading idiom: `NSManagedObjectModel(contentsOf: url)!`.
    @Test func aModelLoadsWithTheFailableInitializer() throws {
        let url = try #require(RealWorldModelTests.models["Commerce"])
        let model = ManagedObjectModel(contentsOf: url)!
        #expect(model.entitiesByName["Customer"] != nil)
    }
}
