import Foundation
import StrataTestSupport
import Testing
@testable import Strata
@testable import StrataStore

/// `BatchInsertRequest` of thousands of objects, as the bulk path writes them: every object
/// stored, indexed and in one history transaction after reopening; upserts under
/// `mergeByPropertyObjectTrump` against stored rows and rows of the same request; dictionaries
/// in any key order and integers of any width.
@Suite struct BatchInsertBulkTests {
    /// `count` employee dictionaries, `Employee i` earning `i * 10`, keys listed in varying orders.
    static func employees(_ range: Range<Int>) -> [[String: Any]] {
        range.map { index in
            index % 2 == 0
                ? ["name": "Employee \(index)", "salary": Int64(index * 10), "notes": "n\(index)"]
                : ["notes": "n\(index)", "salary": index * 10, "name": "Employee \(index)", "active": false]
        }
    }

    /// The stored employees as "name salary active notes", sorted.
    static func stored(in container: PersistentContainer) throws -> [String] {
        try BatchInsertRequestTests.employees(in: container)
    }

    @Test func thousandsOfObjectsAreStoredIndexedAndInOneHistoryTransactionAfterReopening() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let request = BatchInsertRequest(entityName: "Employee", objects: Self.employees(0..<9_000))
        request.resultType = .objectIDs
        let ids = try #require(try BatchInsertRequestTests.execute(request, in: container) as? [ManagedObjectID])
        #expect(ids.count == 9_000 && Set(ids).count == 9_000)

        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(history.count == 1)
        let changes = try #require(history.first?.changes)
        #expect(changes.count == 9_000 && changes.allSatisfy { $0.changeType == .insert })
        #expect(Set(changes.map(\.changedObjectID)) == Set(ids))

        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let fetch = Employee.fetchRequest()
            fetch.predicate = FetchPredicate(key: "salary", .greaterThanOrEqualTo, Int64(89_950))
            fetch.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
            let top = try context.fetch(fetch)
            #expect(top.map(\.name) == (8_995..<9_000).map { "Employee \($0)" })
            #expect(top.map(\.active) == [false, true, false, true, false])
            #expect(try context.count(for: Employee.fetchRequest()) == 9_000)
            let last = try #require(try context.existingObject(with: ids[8_999]) as? Employee)
            #expect(last.name == "Employee 8999" && last.notes == "n8999")
        }
    }

    @Test func aBadObjectAmongThousandsFailsAsTheFirstBadOneWouldAloneAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        // Converted a part of the objects a core: the first bad object in order is reported,
        // whichever part finds its error first.
        var objects = Self.employees(0..<(3 * ParallelParts.rowsPerPart))
        objects[2 * ParallelParts.rowsPerPart + 5] = ["name": "Bob", "salary": "much"]
        objects[objects.count - 1] = ["salary": 5]
        let error = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(
                BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        }
        #expect(error?.code == .keyValueValidation)
        objects[2 * ParallelParts.rowsPerPart + 5] = ["name": "Bob", "salary": 5, "wage": 5]
        let unknown = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(
                BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        }
        #expect(unknown?.code == .keyValueValidation && unknown?.key == "wage")
        #expect(try Self.stored(in: container).isEmpty)
        objects[2 * ParallelParts.rowsPerPart + 5] = ["name": "Bob", "salary": 5]
        let missing = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(
                BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        }
        #expect(missing?.code == .validationMissingMandatoryProperty)
        objects.removeLast()
        _ = try BatchInsertRequestTests.execute(
            BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        let stored = try Self.stored(in: container)
        #expect(stored.count == objects.count && stored.contains("Bob 5 true -"))
    }

    @Test func upsertsMergeIntoStoredRowsAndRowsOfTheSameRequestAndAreRecordedAsUpdates() throws {
        let folder = TemporaryDirectory()
        let model = BatchInsertRequestTests.uniqueNames()
        var container = try PersistentHistoryTests.container(at: folder.store(), model: model)
        _ = try BatchInsertRequestTests.execute(
            BatchInsertRequest(entityName: "Employee", objects: Self.employees(0..<3_000)), in: container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))

        // 1,000 stored names get a new salary, 2,000 names are new, and each new name comes twice.
        var objects = (2_000..<5_000).map { ["name": "Employee \($0)", "salary": Int64(7)] as [String: Any] }
        objects += (3_000..<5_000).map { ["name": "Employee \($0)", "salary": 8, "notes": "again"] as [String: Any] }
        let upsert = BatchInsertRequest(entityName: "Employee", objects: objects)
        upsert.resultType = .count
        #expect(
            try BatchInsertRequestTests.execute(upsert, policy: .mergeByPropertyObjectTrump, in: container) as? Int
                == 3_000)

        let history = try PersistentHistoryTests.transactions(.fetchHistory(after: token), in: container)
        let changes = try #require(history.first?.changes)
        #expect(history.count == 1)
        #expect(changes.filter { $0.changeType == .update }.count == 1_000)
        #expect(changes.filter { $0.changeType == .insert }.count == 2_000)

        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store(), model: model)
        let rows = try Self.stored(in: container)
        #expect(rows.count == 5_000)
        #expect(rows.contains("Employee 1999 19990 false n1999"))
        #expect(rows.contains("Employee 2001 7 false n2001"), "an upsert keeps the values it does not give")
        #expect(rows.contains("Employee 4000 8 true again"), "the later dictionary of a name wins")
    }

    @Test func unknownNamesAndIntegersThatDoNotFitFailAndWriteNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        var objects = Self.employees(0..<100)
        objects[50]["nickname"] = "Ed"
        let unknown = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(
                BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        }
        #expect(unknown?.code == .keyValueValidation)
        objects[50] = ["name": "Ed", "salary": "a lot"]
        let mistyped = #expect(throws: CoreDataError.self) {
            try BatchInsertRequestTests.execute(
                BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        }
        #expect(mistyped?.code == .keyValueValidation)
        #expect(try Self.stored(in: container).isEmpty)

        objects[50] = ["name": "Ed", "salary": Int32(5)]
        objects[51] = ["name": "Fay", "salary": Int16(6)]
        objects[52] = ["name": "Gus", "salary": UInt8(9)]
        _ = try BatchInsertRequestTests.execute(
            BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
        let rows = try Self.stored(in: container)
        #expect(rows.count == 100)
        #expect(rows.contains("Ed 5 true -") && rows.contains("Fay 6 true -") && rows.contains("Gus 9 true -"))
    }
}
