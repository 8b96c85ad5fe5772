import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `BatchUpdateRequest` on a store on disk: the values it writes, what survives a reopen,
/// history, its errors leaving the store unchanged and merging its IDs into a live context.
@Suite struct BatchUpdateRequestTests {
    /// The salaries of the stored employees, by name.
    static func salaries(in container: PersistentContainer) throws -> [String: Int64] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            Dictionary(uniqueKeysWithValues: try context.fetch(Employee.fetchRequest()).map { ($0.name, $0.salary) })
        }
    }

    @Test func updatesTheMatchingObjectsAndTheValuesSurviveReopening() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try BatchDeleteRequestTests.seed(container)
        let request = BatchUpdateRequest(entityName: "Employee")
        request.predicate = try FetchPredicate(checkedFormat: "salary < 250")
        request.propertiesToUpdate = ["salary": 1000, "notes": FetchExpression.constant("raised")]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try BatchDeleteRequestTests.execute(request, in: container) as? BatchUpdateResult)
        #expect(Set(try #require(result.result as? [ManagedObjectID])) == [ids["Ann"]!, ids["Bob"]!])

        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        let changes = try #require(history.last?.changes)
        #expect(Set(changes.filter { $0.changeType == .update }.map(\.changedObjectID)) == [ids["Ann"]!, ids["Bob"]!])
        #expect(Set(changes.first?.updatedProperties?.map(\.name) ?? []) == ["salary", "notes"])

        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store())
        #expect(try Self.salaries(in: container) == ["Ann": 1000, "Bob": 1000, "Cy": 300])
        let context = container.newBackgroundContext()
        let notes = try context.performAndWait {
            try [ids["Bob"]!, ids["Cy"]!].map { (try context.existingObject(with: $0) as! Employee).notes }
        }
        #expect(notes == ["raised", nil])
    }

    @Test func aPinnedContextKeepsReadingTheValuesBeforeTheBatch() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        _ = try BatchDeleteRequestTests.seed(container)
        let reader = container.newBackgroundContext()
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        let request = BatchUpdateRequest(entityName: "Employee")
        request.propertiesToUpdate = ["salary": 7]
        _ = try BatchDeleteRequestTests.execute(request, in: container)
        let pinned = try reader.performAndWait { try reader.fetch(Employee.fetchRequest()).map(\.salary).sorted() }
        #expect(!pinned.contains(7) && pinned.count == 3)
        try reader.performAndWait { try reader.setQueryGenerationFrom(nil) }
        reader.performAndWait { reader.reset() }
        #expect(try Self.salaries(in: container).values.allSatisfy { $0 == 7 })
        #expect(try reader.performAndWait { try reader.fetch(Employee.fetchRequest()).map(\.salary) } == [7, 7, 7])
    }

    @Test func theCountResultCountsTheUpdatedObjects() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        _ = try BatchDeleteRequestTests.seed(container)
        let request = BatchUpdateRequest(entity: container.managedObjectModel.entitiesByName["Employee"]!)
        request.propertiesToUpdate = [
            container.managedObjectModel.entitiesByName["Employee"]!.attributesByName["active"]!: false
        ]
        request.resultType = .updatedObjectsCountResultType
        let result = try #require(try BatchDeleteRequestTests.execute(request, in: container) as? BatchUpdateResult)
        #expect(result.result as? Int == 3)
        let context = container.newBackgroundContext()
        let active = try context.performAndWait { try context.fetch(Employee.fetchRequest()).map(\.active) }
        #expect(active == [false, false, false])
    }

    @Test func badValuesFailAndChangeNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        _ = try BatchDeleteRequestTests.seed(container)
        let cases: [([String: Any], CoreDataError.Code)] = [
            (["salary": "a lot", "notes": "x"], .keyValueValidation),
            (["name": NSNull(), "salary": 5], .validationMissingMandatoryProperty),
            (["wage": 1], .keyValueValidation),
        ]
        for (values, code) in cases {
            let request = BatchUpdateRequest(entityName: "Employee")
            request.propertiesToUpdate = values
            let error = #expect(throws: CoreDataError.self) {
                try BatchDeleteRequestTests.execute(request, in: container)
            }
            #expect(error?.code == code)
            #expect(try Self.salaries(in: container) == ["Ann": 100, "Bob": 200, "Cy": 300])
        }
    }

    @Test func anUpdateGivingTwoObjectsAConstraintsValuesFailsAndChangesNothing() throws {
        let folder = TemporaryDirectory()
        let model = GraphModel.make()
        model.entitiesByName["Employee"]!.uniquenessConstraints = [["name"]]
        let container = try GraphModel.container(at: folder.store(), model: model)
        _ = try BatchDeleteRequestTests.seed(container)
        let request = BatchUpdateRequest(entityName: "Employee")
        request.predicate = try FetchPredicate(checkedFormat: "name == %@", "Bob")
        request.propertiesToUpdate = ["name": "Ann"]
        let error = #expect(throws: CoreDataError.self) { try BatchDeleteRequestTests.execute(request, in: container) }
        #expect(error?.code == .managedObjectConstraintMerge)
        #expect(try Self.salaries(in: container).keys.sorted() == ["Ann", "Bob", "Cy"])
        // Renaming one object to a new value is fine.
        request.propertiesToUpdate = ["name": "Bo"]
        _ = try BatchDeleteRequestTests.execute(request, in: container)
        #expect(try Self.salaries(in: container).keys.sorted() == ["Ann", "Bo", "Cy"])
    }

    @Test func mergingTheUpdatedIDsRefreshesALiveContext() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try BatchDeleteRequestTests.seed(container)
        let view = container.viewContext
        let ann = try view.performAndWait { try view.existingObject(with: ids["Ann"]!) as! Employee }
        #expect(view.performAndWait { ann.salary } == 100)
        let request = BatchUpdateRequest(entityName: "Employee")
        request.propertiesToUpdate = ["salary": Int64(150)]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try BatchDeleteRequestTests.execute(request, in: container) as? BatchUpdateResult)
        #expect(view.performAndWait { ann.salary } == 100, "a batch update does not change registered objects")
        ManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [UpdatedObjectsKey: try #require(result.result as? [ManagedObjectID])], into: [view])
        #expect(view.performAndWait { ann.salary } == 150)
    }
}
