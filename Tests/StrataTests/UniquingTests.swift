import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Uniquing: one object per record per context, and how long a context keeps its objects.
@Suite struct UniquingTests {
    /// Saves Research with Ann and Bob; returns the department's and employees' IDs.
    static func seed(
        _ container: PersistentContainer
    ) throws -> (department: ManagedObjectID, employees: [ManagedObjectID]) {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            let employees = ["Ann", "Bob"].map { name in
                let employee = Employee(context: context)
                employee.name = name
                employee.department = research
                return employee
            }
            try context.save()
            return (research.objectID, employees.map(\.objectID))
        }
    }

    @Test func oneInstancePerRecordPerContext() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "name")]
            let first = try context.fetch(request)
            let second = try context.fetch(request)
            #expect(first.count == 2)
            for (a, b) in zip(first, second) { #expect(a === b) }
            let ann = first[0]
            #expect(context.object(with: ann.objectID) === ann)
            #expect(try context.existingObject(with: ann.objectID) === ann)
            #expect(context.registeredObject(for: ann.objectID) === ann)

            let research = try #require(ann.department)
            #expect(research.objectID == ids.department)
            #expect(context.object(with: ids.department) === research)
            #expect(first[1].department === research, "both employees reach the same department instance")
            #expect(research.employees.contains { $0 === ann })
            #expect(research.employees.contains { $0 === first[1] })
            let byID = try context.fetch(Department.fetchRequest())
            #expect(byID.count == 1)
            #expect(byID[0] === research)
            let objectIDs = FetchRequest<ManagedObjectID>(entityName: "Employee")
            objectIDs.resultType = .managedObjectIDResultType
            #expect(Set(try context.fetch(objectIDs).map { context.object(with: $0) }) == Set(first))
        }
    }

    @Test func insertedObjectKeepsItsInstanceThroughSave() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "New"
            let temporary = department.objectID
            #expect(context.object(with: temporary) === department)
            #expect(
                try context.fetch(Department.fetchRequest()).first === department,
                "a pending insert is fetched as itself")
            try context.save()
            #expect(department.objectID != temporary)
            #expect(context.object(with: department.objectID) === department)
            #expect(try context.fetch(Department.fetchRequest()).first === department, "and still after the save")
            #expect(context.registeredObjects.count == 1)
        }
    }

    @Test func contextsHaveTheirOwnInstances() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let one = container.newBackgroundContext()
        let two = container.newBackgroundContext()
        let a = try one.performAndWait { try one.existingObject(with: ids.department) }
        let b = try two.performAndWait { try two.existingObject(with: ids.department) }
        #expect(a !== b)
        #expect(a != b)
        #expect(a.objectID == b.objectID)
        #expect(a.objectID.hashValue == b.objectID.hashValue)
        #expect(a.managedObjectContext === one)
        #expect(b.managedObjectContext === two)
        one.performAndWait { (a as! Department).name = "Changed in one" }
        two.performAndWait { #expect((b as! Department).name == "Research", "changes stay in their context") }
    }

    /// Registered objects without changes are held weakly: they go away when the application
    /// releases them. Objects with changes stay until saved.
    @Test func registeredObjectsAreWeakUnlessChanged() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        #expect(!context.retainsRegisteredObjects)
        weak var unchanged: ManagedObject?
        weak var changed: ManagedObject?
        weak var inserted: ManagedObject?
        weak var deleted: ManagedObject?
        try context.performAndWait {
            let employees = try context.fetch(Employee.fetchRequest())
            #expect(employees.count == 2)
            unchanged = employees.first { $0.name == "Ann" }
            let bob = try #require(employees.first { $0.name == "Bob" })
            context.delete(bob)
            deleted = bob
            let research = try #require(context.object(with: ids.department) as? Department)
            research.budget = 1
            changed = research
            let newcomer = Employee(context: context)
            newcomer.name = "Cy"
            inserted = newcomer
        }
        context.performAndWait {
            #expect(unchanged == nil, "an object without changes goes away when released")
            #expect(context.registeredObject(for: ids.employees[0]) == nil)
            #expect(changed != nil, "an updated object stays")
            #expect(inserted != nil, "an inserted object stays")
            #expect(deleted != nil, "a deleted object stays")
            #expect(context.updatedObjects.count == 1)
            #expect(context.registeredObjects.count == 3)
        }
        try context.performAndWait { try context.save() }
        context.performAndWait {
            #expect(changed == nil, "once saved, the object has no changes and goes away")
            #expect(inserted == nil)
            #expect(deleted == nil)
            #expect(context.registeredObjects.isEmpty)
        }
        // Released objects come back, as new instances, with their saved values.
        try context.performAndWait {
            let employees = try context.fetch(Employee.fetchRequest())
            #expect(Set(employees.map(\.name)) == ["Ann", "Cy"])
            #expect(employees.first { $0.name == "Ann" }?.department?.budget == 1)
        }
    }

    @Test func retainsRegisteredObjectsKeepsThem() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        weak var kept: ManagedObject?
        weak var fault: ManagedObject?
        try context.performAndWait {
            context.retainsRegisteredObjects = true
            kept = try context.fetch(Employee.fetchRequest()).first
            fault = context.object(with: ids.department)
        }
        context.performAndWait {
            #expect(kept != nil)
            #expect(fault != nil)
            #expect(context.registeredObjects.count == 3)
        }
        try context.performAndWait {
            let department = try #require(fault as? Department)
            department.budget = 5
            try context.save()
        }
        context.performAndWait {
            #expect(kept != nil, "saving keeps them too")
            #expect(fault != nil)
            context.retainsRegisteredObjects = false
        }
        context.performAndWait {
            #expect(kept == nil, "turning the option off lets them go")
            #expect(fault == nil)
            #expect(context.registeredObjects.isEmpty)
        }
    }
}
