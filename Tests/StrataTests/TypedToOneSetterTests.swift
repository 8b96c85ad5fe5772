import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The setter `@Managed` generates for a to-one relationship takes the object as it is (no `Any`
/// made of it): it keeps both sides of the relationship in step, records the change once, and
/// what it sets is saved and read back after reopening, as setting it with `setValue(_:forKey:)`.
@Suite struct TypedToOneSetterTests {
    @Test func aTypedToOneSetterKeepsTheInverseInStepAndIsSaved() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            let sales = Department(context: context)
            sales.name = "Sales"
            let ann = Employee(context: context)
            ann.name = "Ann"
            let bob = Employee(context: context)
            bob.name = "Bob"
            ann.department = research
            bob.department = research
            #expect(research.employees == [ann, bob])
            // Moving Ann takes her out of Research's employees and into Sales'.
            ann.department = sales
            #expect(research.employees == [bob])
            #expect(sales.employees == [ann])
            // The typed setter and the key-value one set the same relationship.
            bob.setValue(sales, forKey: "department")
            #expect(bob.department === sales)
            #expect(research.employees.isEmpty)
            #expect(sales.employees == [ann, bob])
            try context.save()
            #expect(!context.hasChanges)
            // Setting the related object again is no change.
            ann.department = sales
            #expect(!ann.hasChanges && !sales.hasChanges)
            // Clearing it takes Bob out of Sales' employees, a change of both.
            bob.department = nil
            #expect(sales.employees == [ann])
            #expect(bob.changedValues().keys.contains("department"))
            #expect(sales.changedValues().keys.contains("employees"))
            try context.save()
            return [research.objectID, sales.objectID, ann.objectID, bob.objectID]
        }
        try container.close()

        container = try GraphModel.container(at: folder.store())
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let objects = try ids.map {
                try reader.existingObject(
                    with: try #require(
                        container.persistentStoreCoordinator.managedObjectID(
                            forURIRepresentation: $0.uriRepresentation())))
            }
            let (research, sales, ann, bob) = try (
                #require(objects[0] as? Department), #require(objects[1] as? Department),
                #require(objects[2] as? Employee),
                #require(objects[3] as? Employee)
            )
            #expect(ann.department === sales)
            #expect(bob.department == nil)
            #expect(sales.employees == [ann])
            #expect(research.employees.isEmpty)
            // A fault's relationship is set through the typed setter too: the fault fires first.
            reader.refresh(bob, mergeChanges: false)
            #expect(bob.isFault)
            bob.department = research
            #expect(!bob.isFault)
            #expect(research.employees == [bob])
            try reader.save()
        }
        try container.close()

        container = try GraphModel.container(at: folder.store())
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let request = FetchRequest<Employee>(entityName: "Employee")
            request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
            let employees = try check.fetch(request)
            #expect(employees.map(\.name) == ["Ann", "Bob"])
            #expect(employees.map { $0.department?.name } == ["Sales", "Research"])
        }
        try container.close()
    }
}
