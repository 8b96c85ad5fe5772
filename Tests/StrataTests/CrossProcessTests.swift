import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A store saved and closed here is read (and written) by another process, the
/// `strata-graph-probe` executable; an in-memory store does the same work without files.
@Suite struct CrossProcessTests {
    /// Runs the probe; returns its exit status, its JSON output (when it printed some) and its
    /// standard error.
    static func runProbe(_ arguments: String...) throws -> (status: Int32, report: [String: Any]?, errors: String) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "strata-graph-probe")
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try? JSONSerialization.jsonObject(with: outputData) as? [String: Any]
        return (process.terminationStatus, report, String(decoding: errorData, as: UTF8.self))
    }

    /// The employees of a probe report, by name.
    static func employees(_ report: [String: Any]?) -> [String: [String: Any]] {
        let list = report?["employees"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "?", $0) })
    }

    /// The departments of a probe report, by name.
    static func departments(_ report: [String: Any]?) -> [String: [String: Any]] {
        let list = report?["departments"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "?", $0) })
    }

    @Test func anotherProcessSeesEverythingSavedAndClosed() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            research.budget = 1_250_000.5
            let sales = Department(context: context)
            sales.name = "Sales"
            for (name, salary, department) in [
                ("Ann", 90_000, research), ("Bob", 80_000, research), ("Cy", 70_000, sales), ("Dee", 60_000, sales),
            ] {
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = Int64(salary)
                employee.department = department
            }
            let loner = Employee(context: context)
            loner.name = "Eve"
            loner.notes = "no department, ünïcödé"
            loner.active = false
            try context.save()
            // A second and third transaction: an update, a move and a delete.
            let employees = try context.fetch(Employee.fetchRequest())
            let bob = try #require(employees.first { $0.name == "Bob" })
            bob.salary = 85_000
            bob.department = sales
            try context.save()
            context.delete(try #require(employees.first { $0.name == "Dee" }))
            try context.save()
        }

        let locked = try Self.runProbe(url.path)
        #expect(locked.status != 0, "the store is locked while this process has it open")
        #expect(locked.errors.contains("cannot be opened"))

        try container.close()
        let seen = try Self.runProbe(url.path)
        #expect(seen.status == 0, "\(seen.errors)")
        let report = try #require(seen.report, "the probe printed no JSON: \(seen.errors)")
        #expect(report["counts"] as? [String: Int] == ["Department": 2, "Employee": 4])
        let employees = Self.employees(report)
        #expect(Set(employees.keys) == ["Ann", "Bob", "Cy", "Eve"])
        #expect(employees["Ann"]?["salary"] as? Int == 90_000)
        #expect(employees["Bob"]?["salary"] as? Int == 85_000)
        #expect(employees["Bob"]?["department"] as? String == "Sales")
        #expect(employees["Eve"]?["department"] is NSNull)
        #expect(employees["Eve"]?["notes"] as? String == "no department, ünïcödé")
        #expect(employees["Eve"]?["active"] as? Bool == false)
        #expect(employees["Ann"]?["active"] as? Bool == true)
        #expect(employees["Ann"]?["notes"] is NSNull)
        let departments = Self.departments(report)
        #expect(departments["Research"]?["budget"] as? Double == 1_250_000.5)
        #expect(departments["Research"]?["employees"] as? [String] == ["Ann"])
        #expect(departments["Sales"]?["employees"] as? [String] == ["Bob", "Cy"])

        // The other process writes; this one reopens and sees it.
        let added = try Self.runProbe(url.path, "add", "Zed", "123456", "Research")
        #expect(added.status == 0, "\(added.errors)")
        #expect(Self.departments(added.report)["Research"]?["employees"] as? [String] == ["Ann", "Zed"])
        let reopened = try GraphModel.container(at: url)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(try reader.fetch(Department.fetchRequest()).first { $0.name == "Research" })
            #expect(research.employees.map(\.name).sorted() == ["Ann", "Zed"])
            let zed = try #require(research.employees.first { $0.name == "Zed" })
            #expect(zed.salary == 123_456)
            #expect(zed.active, "the model's default value, set by the other process")
        }
        try reopened.close()
    }

    /// Builds a container with one in-memory store.
    static func inMemoryContainer(named name: String) throws -> PersistentContainer {
        let container = PersistentContainer(name: name, managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription()
        description.type = InMemoryStoreType
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        return container
    }

    @Test func inMemoryStoreDoesTheSameWorkWithoutFiles() throws {
        let name = "InMemory-\(UUID().uuidString)"
        let container = try Self.inMemoryContainer(named: name)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        #expect(store.type == InMemoryStoreType)
        #expect(store.url == nil)
        #expect(store.engineStore == nil)

        let writer = container.newBackgroundContext()
        let ids = try writer.performAndWait {
            let research = EntityDescription.insertNewObject(forEntityName: "Department", into: writer) as! Department
            research.name = "Research"
            for (name, salary) in [("Ann", 1), ("Bob", 2), ("Cy", 3)] {
                let employee = Employee(context: writer)
                employee.name = name
                employee.salary = Int64(salary)
                employee.department = research
            }
            try writer.save()
            #expect(!research.objectID.isTemporaryID)
            #expect(research.objectID.storeIdentifier == store.identifier)
            return (research: research.objectID, employees: research.employees.map(\.objectID))
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(reader.object(with: ids.research) as? Department)
            #expect(research.isFault)
            #expect(research.name == "Research")
            #expect(Set(research.employees.map(\.name)) == ["Ann", "Bob", "Cy"])
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(key: "salary", .greaterThanOrEqualTo, 2)
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
            #expect(try reader.fetch(request).map(\.name) == ["Cy", "Bob"])
            let bob = try #require(try reader.fetch(request).last)
            bob.salary = 20
            reader.delete(try #require(research.employees.first { $0.name == "Ann" }))
            try reader.save()
        }
        try writer.performAndWait {
            writer.refreshAllObjects()
            let research = try #require(try writer.existingObject(with: ids.research) as? Department)
            let salaries = research.employees.map(\.salary).sorted()
            #expect(salaries == [3, 20])
            research.name = "R&D"
            try writer.save()
            let count = try writer.count(for: Employee.fetchRequest())
            #expect(count == 2)
        }

        // A conflicting save fails the same way as on disk.
        let stale = container.newBackgroundContext()
        try stale.performAndWait {
            let research = try #require(try stale.existingObject(with: ids.research) as? Department)
            try writer.performAndWait {
                (try writer.existingObject(with: ids.research) as! Department).budget = 7
                try writer.save()
            }
            research.name = "Stale"
            let error = #expect(throws: CoreDataError.self) { try stale.save() }
            #expect(error?.code == .managedObjectMerge)
        }

        // Nothing was written anywhere, and removing the store drops its contents.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).allSatisfy
            { !$0.hasPrefix(name) })
        #expect(
            !FileManager.default.fileExists(
                atPath: PersistentContainer.defaultDirectoryURL().appendingPathComponent("\(name).strata").path))
        try container.close()
        #expect(container.persistentStoreCoordinator.persistentStores.isEmpty)
        let fresh = try Self.inMemoryContainer(named: name)
        let context = fresh.newBackgroundContext()
        let remaining = try context.performAndWait { try context.count(for: Employee.fetchRequest()) }
        #expect(remaining == 0, "a new in-memory store starts empty")
    }
}
