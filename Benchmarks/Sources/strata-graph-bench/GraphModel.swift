import Foundation
import Strata
import Workloads

/// A department of the reference model, as a typed managed object.
///
/// Named `…MO` (Core Data's usual suffix) because `Workloads` already has the `Department` and
/// `Employee` value types the data set is made of.
final class DepartmentMO: ManagedObject {
    @Managed var name: String
    @Managed var budget: Double
    @Managed var employees: Set<EmployeeMO>
}

/// An employee of the reference model, as a typed managed object.
final class EmployeeMO: ManagedObject {
    @Managed var name: String
    @Managed var salary: Int64
    @Managed var hired: Date
    @Managed var active: Bool
    @Managed var notes: String
    @Managed var photo: Data?
    @Managed var department: DepartmentMO?

    /// Sets the attributes of `employee` through the typed accessors (not the department).
    func assign(_ employee: Employee) {
        name = employee.name
        salary = employee.salary
        hired = employee.hired
        active = employee.active
        notes = employee.notes
        if let photo = employee.photo { self.photo = photo }
    }
}

/// The model of WORKLOADS.md built in code, as an app would build (or load) it once.
enum GraphModel {
    static let departmentEntity = "Department"
    static let employeeEntity = "Employee"

    /// Registers the subclasses so that faults and fetches in a fresh process create them.
    static func registerClasses() {
        DepartmentMO.register(for: departmentEntity)
        EmployeeMO.register(for: employeeEntity)
    }

    /// `Department(name indexed, budget, employees ->> Employee cascade)` and
    /// `Employee(name, salary indexed, hired, active, notes, photo?, department -> Department nullify)`.
    static func make() -> ManagedObjectModel {
        let department = EntityDescription(name: departmentEntity)
        department.managedObjectClassName = "DepartmentMO"
        let employee = EntityDescription(name: employeeEntity)
        employee.managedObjectClassName = "EmployeeMO"

        func attribute(
            _ name: String, _ type: AttributeDescription.AttributeType, optional: Bool = false
        ) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: type)
            attribute.isOptional = optional
            return attribute
        }
        let departmentName = attribute("name", .string)
        let budget = attribute("budget", .double)
        let employeeName = attribute("name", .string)
        let salary = attribute("salary", .integer64)
        let hired = attribute("hired", .date)
        let active = attribute("active", .boolean)
        let notes = attribute("notes", .string)
        let photo = attribute("photo", .binaryData, optional: true)

        let employees = RelationshipDescription()
        employees.name = "employees"
        employees.maxCount = 0  // to-many
        employees.deleteRule = .cascadeDeleteRule
        let worksIn = RelationshipDescription()
        worksIn.name = "department"
        worksIn.maxCount = 1
        worksIn.deleteRule = .nullifyDeleteRule
        employees.destinationEntity = employee
        worksIn.destinationEntity = department
        employees.inverseRelationship = worksIn
        worksIn.inverseRelationship = employees

        department.properties = [departmentName, budget, employees]
        employee.properties = [employeeName, salary, hired, active, notes, photo, worksIn]
        department.indexes = [
            FetchIndexDescription(
                name: "byName",
                elements: [FetchIndexElementDescription(property: departmentName, collationType: .binary)])
        ]
        employee.indexes = [
            FetchIndexDescription(
                name: "bySalary", elements: [FetchIndexElementDescription(property: salary, collationType: .binary)])
        ]
        let model = ManagedObjectModel()
        model.entities = [department, employee]
        return model
    }
}
