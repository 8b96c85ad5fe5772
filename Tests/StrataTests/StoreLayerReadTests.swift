import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// The store layer's read side: the coordinator's row cache shared by its contexts, objects that
/// decode only what is read, and ordered index walks, all through a real store on disk.
@Suite("Store layer reads")
struct StoreLayerReadTests {
    /// A store with `count` employees (salary = 1,000 × index, every `activeEvery`-th active)
    /// in one department; returns their URIs in insertion order.
    private static func seed(_ container: PersistentContainer, count: Int, activeEvery: Int = 1) throws -> [URL] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let department = Department(context: context)
            department.name = "R&D"
            var employees: [Employee] = []
            for index in 0..<count {
                let employee = Employee(context: context)
                employee.name = "e\(index)"
                employee.salary = Int64(index * 1_000)
                employee.active = index % activeEvery == 0
                employee.notes = "notes of \(index)"
                employee.department = department
                employees.append(employee)
            }
            try context.save()
            return employees.map { $0.objectID.uriRepresentation() }
        }
    }

    /// The blocks the engine read or found in its cache: unchanged when a row came from the row cache.
    private static func engineReads(_ container: PersistentContainer) throws -> Int {
        let statistics = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
            .statistics
        return statistics.cacheHits + statistics.cacheMisses
    }

    @Test func aSecondContextsFaultIsServedFromTheCoordinatorsRowCache() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let uris = try Self.seed(container, count: 20)
        let coordinator = container.persistentStoreCoordinator
        let id = try #require(coordinator.managedObjectID(forURIRepresentation: uris[7]))
        let first = container.newBackgroundContext()
        let firstName = try first.performAndWait { (try first.existingObject(with: id) as! Employee).name }
        let readsBefore = try Self.engineReads(container)
        let second = container.newBackgroundContext()
        let (secondName, notes) = try second.performAndWait {
            let employee = try second.existingObject(with: id) as! Employee
            return (employee.name, employee.notes)
        }
        #expect(firstName == "e7" && secondName == "e7" && notes == "notes of 7")
        #expect(try Self.engineReads(container) == readsBefore)
        try container.close()
    }

    @Test func aSaveInvalidatesTheRowCacheForEveryContextAndCoordinator() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let uris = try Self.seed(container, count: 10)
        let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uris[3]))
        let reader = container.newBackgroundContext()
        _ = try reader.performAndWait { (try reader.existingObject(with: id) as! Employee).salary }
        // A save through another coordinator sharing the engine store.
        let other = try GraphModel.container(at: folder.store())
        let writer = other.newBackgroundContext()
        try writer.performAndWait {
            let otherID = try #require(other.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uris[3]))
            let employee = try writer.existingObject(with: otherID) as! Employee
            employee.salary = 123_456
            employee.notes = "changed"
            try writer.save()
        }
        let fresh = container.newBackgroundContext()
        let (salary, notes) = try fresh.performAndWait {
            let employee = try fresh.existingObject(with: id) as! Employee
            return (employee.salary, employee.notes)
        }
        #expect(salary == 123_456 && notes == "changed")
        // A refresh of the first reader's object sees the change too.
        let refreshed = try reader.performAndWait {
            let employee = try reader.existingObject(with: id) as! Employee
            reader.refresh(employee, mergeChanges: false)
            return employee.salary
        }
        #expect(refreshed == 123_456)
        try other.close()
        try container.close()
    }

    @Test func theRowCacheIsBoundedAndServesARowOnlyAtTheSequenceItWasReadAt() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        _ = try Self.seed(container, count: 3)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        let cache = RowCache(capacity: 2)
        cache.keep(.decoded(Row([.int(1)])), store, entity: 1, key: 1, sequence: 5)
        cache.keep(.decoded(Row([.int(2)])), store, entity: 1, key: 2, sequence: 5)
        #expect(cache.row(store, entity: 1, key: 2, sequence: 5)?.row == Row([.int(2)]))
        #expect(cache.row(store, entity: 2, key: 2, sequence: 5) == nil)
        // Key 3 takes key 1's entry: never more than the capacity.
        cache.keep(.decoded(Row([.int(3)])), store, entity: 1, key: 3, sequence: 5)
        #expect(cache.count == 2)
        #expect(cache.row(store, entity: 1, key: 1, sequence: 5) == nil)
        // Once the store moved on, no row read before is served.
        #expect(cache.row(store, entity: 1, key: 3, sequence: 6) == nil)
        cache.keep(.decoded(Row([.int(9)])), store, entity: 1, key: 9, sequence: 4)
        #expect(cache.row(store, entity: 1, key: 9, sequence: 5) == nil)
        cache.remove(store)
        #expect(cache.count == 0)

        // A full-size cache makes the page of the rows kept, not the whole table.
        let large = RowCache()
        large.keep(.decoded(Row([.int(1)])), store, entity: 1, key: 1, sequence: 5)
        large.keep(.decoded(Row([.int(2)])), store, entity: 1, key: 2, sequence: 5)
        #expect(large.entriesMade == 256)
        large.keep(.decoded(Row([.int(3)])), store, entity: 1, key: 300, sequence: 5)
        #expect(large.entriesMade == 512)
        #expect(large.row(store, entity: 1, key: 300, sequence: 5)?.row == Row([.int(3)]))
        #expect(large.row(store, entity: 1, key: 2, sequence: 5)?.row == Row([.int(2)]))
        #expect(large.row(store, entity: 1, key: 1_000, sequence: 5) == nil)
        #expect(large.count == 3)
        try container.close()
    }

    @Test func fetchedObjectsDecodeOnlyWhatIsReadAndKeepEveryValueThroughChangesAndReopen() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        _ = try Self.seed(container, count: 50)
        let context = container.newBackgroundContext()
        context.undoManager = UndoManager()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
            let employees = try context.fetch(request)
            #expect(employees.count == 50)
            // Reading one property leaves the others undecoded, and the object unchanged.
            #expect(employees[4].notes == "notes of 4")
            #expect(employees[4].lazyRow != nil)
            #expect(employees[4].changedValues().isEmpty && !employees[4].hasChanges)
            let committed = employees[5].committedValues(forKeys: nil)
            #expect(
                committed["name"] as? String == "e5" && committed["salary"] as? Int64 == 5_000
                    && committed["notes"] as? String == "notes of 5")
            // A change decodes the rest first: committed values stay the stored ones.
            employees[6].salary = 777
            #expect(employees[6].changedValues().keys.sorted() == ["salary"])
            #expect(employees[6].committedValues(forKeys: ["salary", "name"])["salary"] as? Int64 == 6_000)
            #expect(employees[6].name == "e6" && employees[6].department?.name == "R&D")
            context.undoManager?.undo()
            #expect(employees[6].salary == 6_000 && !employees[6].hasChanges)
            employees[7].notes = nil
            try context.save()
        }
        try container.close()
        container = try GraphModel.container(at: folder.store())
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
            let employees = try reader.fetch(request)
            for (index, employee) in employees.enumerated() {
                #expect(employee.name == "e\(index)")
                #expect(employee.salary == Int64(index * 1_000))
                #expect(employee.notes == (index == 7 ? nil : "notes of \(index)"))
                #expect(employee.department?.name == "R&D")
            }
        }
        try container.close()
    }

    @Test func anOrderedWalkThatAcceptsFewRowsReadsPastItsFirstReachAndMatchesAScan() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        // One row in 40 is active: fewer than the walk's first reach of 16 keys per row needed.
        _ = try Self.seed(container, count: 2_000, activeEvery: 40)
        try container.close()
        container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (limit, descending) in [(10, true), (30, false), (60, true)] {
                let request = Employee.fetchRequest()
                request.predicate = try FetchPredicate(
                    checkedFormat: "salary >= %@ AND active == YES", argumentArray: [100_000])
                request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: !descending)]
                request.fetchLimit = limit
                let objects = try context.fetch(request)
                let walked = objects.map(\.salary)
                // IDs and faults come from a walk that decodes only the tested columns.
                let idRequest = FetchRequest<ManagedObjectID>(entityName: "Employee")
                idRequest.resultType = .managedObjectIDResultType
                idRequest.predicate = request.predicate
                idRequest.sortDescriptors = request.sortDescriptors
                idRequest.fetchLimit = limit
                #expect(try context.fetch(idRequest) == objects.map(\.objectID))
                request.includesPropertyValues = false
                #expect(try context.fetch(request).map(\.salary) == walked)
                let active: [Int64] = stride(from: 0, to: 2_000, by: 40).map { Int64($0) * 1_000 }.filter {
                    $0 >= 100_000
                }
                let ordered: [Int64] = descending ? active.reversed() : active
                let expected = Array(ordered.prefix(limit))
                #expect(walked == expected)
            }
        }
        try container.close()
    }

    @Test func aRepeatedOrderedWalkReadsTheRowCacheAndSeesEverySaveAfterIt() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let uris = try Self.seed(container, count: 300, activeEvery: 3)
        /// The names and salaries of the 20 best-paid active employees, fetched by a new context
        /// (so that no object of an earlier fetch is reused).
        func topEarners() throws -> [String] {
            let context = container.newBackgroundContext()
            return try context.performAndWait {
                let request = Employee.fetchRequest()
                request.predicate = try FetchPredicate(
                    checkedFormat: "salary > %@ AND active == YES", argumentArray: [50_000])
                request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
                request.fetchLimit = 20
                return try context.fetch(request).map { "\($0.name)=\($0.salary)" }
            }
        }
        let expected = stride(from: 297, through: 0, by: -3).prefix(20).map { "e\($0)=\($0 * 1_000)" }
        #expect(try topEarners() == expected)
        // The same walk again reads no block: its rows come from the coordinator's row cache.
        let readsBefore = try Self.engineReads(container)
        #expect(try topEarners() == expected)
        #expect(try Self.engineReads(container) == readsBefore)
        // A save through another coordinator on the same store makes the cached rows stale: the
        // top earner is no longer active, another takes a top salary, and a third is renamed.
        let other = try GraphModel.container(at: folder.store())
        let writer = other.newBackgroundContext()
        try writer.performAndWait {
            for (index, change) in [(297, "inactive"), (3, "raise"), (294, "rename")] {
                let id = try #require(
                    other.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uris[index]))
                let employee = try writer.existingObject(with: id) as! Employee
                switch change {
                case "inactive": employee.active = false
                case "raise": employee.salary = 1_000_000
                default: employee.name = "renamed"
                }
            }
            try writer.save()
        }
        var changed = ["e3=1000000"] + expected.dropFirst().prefix(19)
        changed[1] = "renamed=294000"
        #expect(try topEarners() == changed)
        // And once read again, they are cached again.
        let readsAfterSave = try Self.engineReads(container)
        #expect(try topEarners() == changed)
        #expect(try Self.engineReads(container) == readsAfterSave)
        try other.close()
        try container.close()
    }
}
