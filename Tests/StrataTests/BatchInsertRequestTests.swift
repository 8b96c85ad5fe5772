import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `BatchInsertRequest` on a store on disk: dictionaries and handlers, type conversion and
/// defaults, required values, upserts under the merge policies, reopen, history and merging.
@Suite struct BatchInsertRequestTests {
    /// The stored employees as (name, salary, active, notes), sorted by name.
    static func employees(in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(Employee.fetchRequest()).map { "\($0.name) \($0.salary) \($0.active) \($0.notes ?? "-")" }
                .sorted()
        }
    }

    /// Executes `request` in a new context with `policy`.
    static func execute(
        _ request: BatchInsertRequest, policy: MergePolicy = .error, in container: PersistentContainer
    ) throws -> Any? {
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        return try context.performAndWait {
            let result = try #require(try context.execute(request) as? BatchInsertResult)
            #expect(result.resultType == request.resultType)
            return result.result
        }
    }

    /// The graph model with employees unique by name.
    static func uniqueNames() -> ManagedObjectModel {
        let model = GraphModel.make()
        model.entitiesByName["Employee"]!.uniquenessConstraints = [["name"]]
        return model
    }

    @Test func insertsDictionariesWithConvertedValuesAndDefaultsThatSurviveReopening() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let request = BatchInsertRequest(
            entityName: "Employee",
            objects: [
                ["name": "Ann", "salary": 100, "notes": "first"],
                ["name": "Bob", "salary": Int32(200), "active": false],
            ])
        request.resultType = .objectIDs
        let ids = try #require(try Self.execute(request, in: container) as? [ManagedObjectID])
        #expect(ids.count == 2 && ids.allSatisfy { !$0.isTemporaryID && $0.entity.name == "Employee" })

        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(history.count == 1)
        #expect(
            Set(try #require(history.first?.changes).filter { $0.changeType == .insert }.map(\.changedObjectID))
                == Set(ids))

        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store())
        #expect(try Self.employees(in: container) == ["Ann 100 true first", "Bob 200 false -"])
        let context = container.newBackgroundContext()
        let name = try context.performAndWait { (try context.existingObject(with: ids[1]) as! Employee).name }
        #expect(name == "Bob")
    }

    @Test func theHandlersFillObjectsUntilTheyReturnTrue() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let entity = container.managedObjectModel.entitiesByName["Employee"]!
        var next = 0
        let dictionaries = BatchInsertRequest(entity: entity) { dictionary in
            guard next < 3 else { return true }
            dictionary["name"] = "D\(next)"
            dictionary["salary"] = next
            next += 1
            return false
        }
        dictionaries.resultType = .count
        #expect(try Self.execute(dictionaries, in: container) as? Int == 3)
        var made = 0
        let objects = BatchInsertRequest(
            entity: entity,
            managedObjectHandler: { object in
                guard made < 2 else { return true }
                object.setValue("M\(made)", forKey: "name")
                object.setValue(Int64(10 + made), forKey: "salary")
                made += 1
                return false
            })
        #expect(try Self.execute(objects, in: container) as? Bool == true)
        #expect(
            try Self.employees(in: container) == [
                "D0 0 true -", "D1 1 true -", "D2 2 true -", "M0 10 true -", "M1 11 true -",
            ])
    }

    @Test func aMissingRequiredValueOrAWrongTypeFailsAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let cases: [([[String: Any]], CoreDataError.Code)] = [
            ([["name": "Ann"], ["salary": 5]], .validationMissingMandatoryProperty),
            ([["name": "Ann"], ["name": "Bob", "salary": "much"]], .keyValueValidation),
            ([["name": "Ann", "department": "Sales"]], .keyValueValidation),
        ]
        for (objects, code) in cases {
            let error = #expect(throws: CoreDataError.self) {
                try Self.execute(BatchInsertRequest(entityName: "Employee", objects: objects), in: container)
            }
            #expect(error?.code == code)
            #expect(try Self.employees(in: container).isEmpty)
        }
    }

    @Test func constrainedValuesFailUnderTheErrorPolicyAndUpsertUnderObjectTrump() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store(), model: Self.uniqueNames())
        _ = try Self.execute(
            BatchInsertRequest(entityName: "Employee", objects: [["name": "Ann", "salary": 100, "notes": "kept"]]),
            in: container)
        let again = [["name": "Ann", "salary": 500] as [String: Any], ["name": "Dan", "salary": 1]]

        let error = #expect(throws: CoreDataError.self) {
            try Self.execute(BatchInsertRequest(entityName: "Employee", objects: again), in: container)
        }
        #expect(error?.code == .managedObjectConstraintMerge)
        #expect(try Self.employees(in: container) == ["Ann 100 true kept"])

        _ = try Self.execute(
            BatchInsertRequest(entityName: "Employee", objects: again), policy: .mergeByPropertyStoreTrump,
            in: container)
        #expect(try Self.employees(in: container) == ["Ann 100 true kept", "Dan 1 true -"])

        let upsert = BatchInsertRequest(entityName: "Employee", objects: again + [["name": "Dan", "salary": 2]])
        upsert.resultType = .count
        #expect(try Self.execute(upsert, policy: .mergeByPropertyObjectTrump, in: container) as? Int == 2)
        try container.close()
        container = try GraphModel.container(at: folder.store(), model: Self.uniqueNames())
        #expect(try Self.employees(in: container) == ["Ann 500 true kept", "Dan 2 true -"])

        // Overwrite replaces every attribute, defaults included.
        _ = try Self.execute(
            BatchInsertRequest(entityName: "Employee", objects: [["name": "Ann", "salary": 7]]), policy: .overwrite,
            in: container)
        #expect(try Self.employees(in: container) == ["Ann 7 true -", "Dan 2 true -"])
    }

    @Test func mergingTheInsertedIDsShowsTheObjectsInALiveContext() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let view = container.viewContext
        #expect(try view.performAndWait { try view.count(for: Employee.fetchRequest()) } == 0)
        let request = BatchInsertRequest(entityName: "Employee", objects: [["name": "Ann"], ["name": "Bob"]])
        request.resultType = .objectIDs
        let ids = try #require(try Self.execute(request, in: container) as? [ManagedObjectID])
        let observer = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: view)
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [InsertedObjectsKey: ids], into: [view])
        #expect(observer.posts.current.contains { $0["inserted"] == Set(ids) })
        let names = try view.performAndWait { try ids.map { (try view.existingObject(with: $0) as! Employee).name } }
        #expect(names == ["Ann", "Bob"])
    }
}
