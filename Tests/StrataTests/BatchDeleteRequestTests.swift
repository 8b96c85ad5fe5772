import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `BatchDeleteRequest` on a store on disk: what it deletes, what survives a reopen, the
/// relationship rules it keeps, the history it records and merging its IDs into a live context.
@Suite struct BatchDeleteRequestTests {
    /// Saves Sales (Ann 100, Bob 200) and Research (Cy 300); returns every object's ID by name.
    static func seed(_ container: PersistentContainer) throws -> [String: ManagedObjectID] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var objects: [String: ManagedObject] = [:]
            for (name, people) in [("Sales", [("Ann", 100), ("Bob", 200)]), ("Research", [("Cy", 300)])] {
                let department = Department(context: context)
                department.name = name
                objects[name] = department
                for (person, salary) in people {
                    let employee = Employee(context: context)
                    employee.name = person
                    employee.salary = Int64(salary)
                    employee.department = department
                    objects[person] = employee
                }
            }
            try context.save()
            return objects.mapValues(\.objectID)
        }
    }

    /// The names of the stored objects of `entity`, sorted.
    static func names(_ entity: String, in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map {
                $0.value(forKey: "name") as! String
            }.sorted()
        }
    }

    /// Executes `request` in a new context.
    static func execute(
        _ request: PersistentStoreRequest, in container: PersistentContainer
    ) throws -> PersistentStoreResult {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.execute(request) }
    }

    @Test func deletesWhatTheFetchRequestMatchesAndTheDeletionSurvivesReopening() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try Self.seed(container)
        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = try FetchPredicate(checkedFormat: "salary >= 200")
        let request = BatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .resultTypeObjectIDs
        let result = try #require(try Self.execute(request, in: container) as? BatchDeleteResult)
        #expect(Set(try #require(result.result as? [ManagedObjectID])) == [ids["Bob"]!, ids["Cy"]!])

        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        let deletions = try #require(history.last?.changes).filter { $0.changeType == .delete }.map(\.changedObjectID)
        #expect(Set(deletions) == [ids["Bob"]!, ids["Cy"]!])

        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store())
        #expect(try Self.names("Employee", in: container) == ["Ann"])
        #expect(try Self.names("Department", in: container) == ["Research", "Sales"])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let sales = try context.existingObject(with: ids["Sales"]!) as! Department
            #expect(sales.employees.map(\.name) == ["Ann"])
        }
    }

    /// The rows the fetch read go to the store decoded as far as it reads them: without history
    /// the fetch indexes (the salary index counts the deleted objects no more, before and after a
    /// reopen), with history the whole row (each delete carries every previous value).
    @Test(arguments: [false, true]) func theIndexesForgetDeletedObjectsAndTheHistoryKeepsTheirValues(
        tracksHistory: Bool
    ) throws {
        let folder = TemporaryDirectory()
        let open = {
            tracksHistory
                ? try PersistentHistoryTests.container(at: folder.store())
                : try GraphModel.container(at: folder.store())
        }
        var container = try open()
        let ids = try Self.seed(container)
        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = try FetchPredicate(checkedFormat: "salary >= 200")
        _ = try Self.execute(BatchDeleteRequest(fetchRequest: fetch), in: container)
        let paid = { (container: PersistentContainer) throws -> Int in
            let context = container.newBackgroundContext()
            return try context.performAndWait {
                let request = FetchRequest<Employee>(entityName: "Employee")
                request.predicate = try FetchPredicate(checkedFormat: "salary >= 100")
                return try context.count(for: request)
            }
        }
        #expect(try paid(container) == 1)
        if tracksHistory {
            let history = try PersistentHistoryTests.transactions(
                .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
            let deletes = try #require(history.last?.changes).filter { $0.changeType == .delete }
            let previous = Dictionary(
                uniqueKeysWithValues: deletes.map { ($0.changedObjectID, $0.previousValues ?? [:]) })
            #expect(previous[ids["Bob"]!]?["name"] as? String == "Bob")
            #expect(previous[ids["Cy"]!]?["salary"] as? Int64 == 300)
            #expect(previous[ids["Cy"]!]?["department"] as? ManagedObjectID == ids["Research"])
        }
        try container.close()
        container = try open()
        #expect(try paid(container) == 1)
        try container.close()
    }

    @Test func cascadeRulesDeleteTheRelatedObjectsAndTheCountIncludesThem() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let request = BatchDeleteRequest(objectIDs: [ids["Sales"]!])
        request.resultType = .resultTypeCount
        let result = try #require(try Self.execute(request, in: container) as? BatchDeleteResult)
        #expect(result.result as? Int == 3)
        #expect(try Self.names("Employee", in: container) == ["Cy"])
        #expect(try Self.names("Department", in: container) == ["Research"])
    }

    /// Department –employees (rule)→> Employee –department→ Department, required when `required`.
    static func ruleModel(_ rule: DeleteRule, required: Bool) -> ManagedObjectModel {
        let department = ModelBuilder.entity("Department", [ModelBuilder.attribute("name", .string)])
        let employee = ModelBuilder.entity("Employee", [ModelBuilder.attribute("name", .string)])
        let employees = ModelBuilder.relationship(
            "employees", from: department, to: employee, toMany: true, deleteRule: rule)
        let worksIn = ModelBuilder.relationship("department", from: employee, to: department, isOptional: !required)
        ModelBuilder.inverse(employees, worksIn)
        return ModelBuilder.model([department, employee])
    }

    /// Saves a department with one employee in a store of `model`; returns their IDs.
    static func seedRuleModel(
        _ container: PersistentContainer
    ) throws -> (department: ManagedObjectID, employee: ManagedObjectID) {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let department = ManagedObject(
                entity: container.managedObjectModel.entitiesByName["Department"]!, insertInto: context)
            department.setValue("Sales", forKey: "name")
            let employee = ManagedObject(
                entity: container.managedObjectModel.entitiesByName["Employee"]!, insertInto: context)
            employee.setValue("Ann", forKey: "name")
            employee.setValue(department, forKey: "department")
            try context.save()
            return (department.objectID, employee.objectID)
        }
    }

    @Test(arguments: [
        (DeleteRule.denyDeleteRule, false, CoreDataError.Code.validationRelationshipDeniedDelete),
        (DeleteRule.nullifyDeleteRule, true, CoreDataError.Code.validationMissingMandatoryProperty),
    ])
    func aDeniedDeleteOrARequiredInverseFailsAndDeletesNothing(
        rule: DeleteRule, required: Bool, code: CoreDataError.Code
    ) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.ruleModel(rule, required: required))
        let ids = try Self.seedRuleModel(container)
        let error = #expect(throws: CoreDataError.self) {
            try Self.execute(BatchDeleteRequest(objectIDs: [ids.department]), in: container)
        }
        #expect(error?.code == code)
        #expect(try Self.names("Department", in: container) == ["Sales"])
        #expect(try Self.names("Employee", in: container) == ["Ann"])
    }

    @Test func nullifyClearsTheSurvivorsInverseToOne() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(
            at: folder.store(), model: Self.ruleModel(.nullifyDeleteRule, required: false))
        let ids = try Self.seedRuleModel(container)
        let result = try #require(
            try Self.execute(BatchDeleteRequest(objectIDs: [ids.department]), in: container) as? BatchDeleteResult)
        #expect(result.result as? Bool == true)
        try container.close()
        container = try GraphModel.container(
            at: folder.store(), model: Self.ruleModel(.nullifyDeleteRule, required: false))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employee = try context.existingObject(with: ids.employee)
            #expect(employee.value(forKey: "department") == nil)
        }
    }

    @Test func mergingTheDeletedIDsRemovesTheObjectsFromALiveContext() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let view = container.viewContext
        let bob = try view.performAndWait { try view.existingObject(with: ids["Bob"]!) as! Employee }
        let sales = try view.performAndWait { try view.existingObject(with: ids["Sales"]!) as! Department }
        #expect(view.performAndWait { sales.employees.count } == 2)

        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = try FetchPredicate(checkedFormat: "name == %@", "Bob")
        let request = BatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .resultTypeObjectIDs
        let result = try #require(try Self.execute(request, in: container) as? BatchDeleteResult)
        let deleted = try #require(result.result as? [ManagedObjectID])
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: deleted], into: [view])
        view.performAndWait {
            #expect(bob.isDeleted && view.deletedObjects.contains(bob), "deleted here until the next save, as in Core Data")
        }
    }

    @Test func deletingOneSideOfAManyToManyRelationshipRemovesItsPairs() throws {
        func model() -> ManagedObjectModel {
            let student = ModelBuilder.entity("Student", [ModelBuilder.attribute("name", .string)])
            let course = ModelBuilder.entity("Course", [ModelBuilder.attribute("name", .string)])
            ModelBuilder.inverse(
                ModelBuilder.relationship("courses", from: student, to: course, toMany: true),
                ModelBuilder.relationship("students", from: course, to: student, toMany: true))
            return ModelBuilder.model([student, course])
        }
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store(), model: model())
        let context = container.newBackgroundContext()
        let (studentID, mathID) = try context.performAndWait {
            let student = ManagedObject(
                entity: container.managedObjectModel.entitiesByName["Student"]!, insertInto: context)
            student.setValue("Sam", forKey: "name")
            var courses: [ManagedObject] = []
            for name in ["Math", "Art"] {
                let course = ManagedObject(
                    entity: container.managedObjectModel.entitiesByName["Course"]!, insertInto: context)
                course.setValue(name, forKey: "name")
                courses.append(course)
            }
            student.setValue(Set(courses), forKey: "courses")
            try context.save()
            return (student.objectID, courses[0].objectID)
        }
        _ = try Self.execute(BatchDeleteRequest(objectIDs: [mathID]), in: container)
        try container.close()
        container = try GraphModel.container(at: folder.store(), model: model())
        let reader = container.newBackgroundContext()
        let courses = try reader.performAndWait {
            let student = try reader.existingObject(with: studentID)
            return (student.value(forKey: "courses") as! Set<ManagedObject>).map { $0.value(forKey: "name") as! String }
        }
        #expect(courses == ["Art"])
    }

    @Test func deletingAnObjectAnInverseLessToManyHoldsRemovesItFromThatRelationship() throws {
        func model() -> ManagedObjectModel {
            let list = ModelBuilder.entity("List", [ModelBuilder.attribute("name", .string)])
            let item = ModelBuilder.entity("Item", [ModelBuilder.attribute("name", .string)])
            ModelBuilder.relationship("items", from: list, to: item, toMany: true)
            return ModelBuilder.model([list, item])
        }
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store(), model: model())
        let context = container.newBackgroundContext()
        let (listID, firstID) = try context.performAndWait {
            let list = ManagedObject(entity: container.managedObjectModel.entitiesByName["List"]!, insertInto: context)
            list.setValue("Chores", forKey: "name")
            var items: [ManagedObject] = []
            for name in ["Dishes", "Laundry"] {
                let item = ManagedObject(
                    entity: container.managedObjectModel.entitiesByName["Item"]!, insertInto: context)
                item.setValue(name, forKey: "name")
                items.append(item)
            }
            list.setValue(Set(items), forKey: "items")
            try context.save()
            return (list.objectID, items[0].objectID)
        }
        _ = try Self.execute(BatchDeleteRequest(objectIDs: [firstID]), in: container)
        try container.close()
        container = try GraphModel.container(at: folder.store(), model: model())
        let reader = container.newBackgroundContext()
        let items = try reader.performAndWait {
            (try reader.existingObject(with: listID).value(forKey: "items") as! Set<ManagedObject>).map {
                $0.value(forKey: "name") as! String
            }
        }
        #expect(items == ["Laundry"])
    }
}
