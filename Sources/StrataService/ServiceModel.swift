import Foundation
import Strata

/// A department of the service's model, as a typed managed object.
final class DepartmentMO: ManagedObject {
    @Managed var name: String
    @Managed var budget: Double
    @Managed var employees: Set<EmployeeMO>
}

/// An employee of the service's model, as a typed managed object.
final class EmployeeMO: ManagedObject {
    @Managed var name: String
    @Managed var salary: Int64
    @Managed var hired: Date
    @Managed var active: Bool
    @Managed var notes: String
    @Managed var photo: Data?
    @Managed var department: DepartmentMO?
}

/// The reference model of the benchmark workloads (WORKLOADS.md), built in code once, as a
/// service loads its model once at start.
enum ServiceModel {
    /// The department entity's name, as IDs and the change feed name it.
    static let department = "Department"
    /// The employee entity's name.
    static let employee = "Employee"

    /// Registers the subclasses so that faults and fetches create them.
    static func registerClasses() {
        DepartmentMO.register(for: department)
        EmployeeMO.register(for: employee)
    }

    /// `Department(name indexed, budget, employees ->> Employee cascade)` and
    /// `Employee(name, salary indexed, hired, active, notes, photo?, department -> Department nullify)`.
    static func make() -> ManagedObjectModel {
        let departmentEntity = EntityDescription(name: department)
        departmentEntity.managedObjectClassName = "DepartmentMO"
        let employeeEntity = EntityDescription(name: employee)
        employeeEntity.managedObjectClassName = "EmployeeMO"

        func attribute(
            _ name: String, _ type: AttributeDescription.AttributeType, optional: Bool = false
        ) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: type)
            attribute.isOptional = optional
            return attribute
        }
        let departmentName = attribute("name", .string)
        let salary = attribute("salary", .integer64)

        let employees = RelationshipDescription()
        employees.name = "employees"
        employees.maxCount = 0
        employees.deleteRule = .cascadeDeleteRule
        let worksIn = RelationshipDescription()
        worksIn.name = "department"
        worksIn.maxCount = 1
        worksIn.deleteRule = .nullifyDeleteRule
        employees.destinationEntity = employeeEntity
        worksIn.destinationEntity = departmentEntity
        employees.inverseRelationship = worksIn
        worksIn.inverseRelationship = employees

        departmentEntity.properties = [departmentName, attribute("budget", .double), employees]
        employeeEntity.properties = [
            attribute("name", .string), salary, attribute("hired", .date), attribute("active", .boolean),
            attribute("notes", .string), attribute("photo", .binaryData, optional: true), worksIn,
        ]
        departmentEntity.indexes = [
            FetchIndexDescription(
                name: "byName",
                elements: [FetchIndexElementDescription(property: departmentName, collationType: .binary)])
        ]
        employeeEntity.indexes = [
            FetchIndexDescription(
                name: "bySalary", elements: [FetchIndexElementDescription(property: salary, collationType: .binary)])
        ]
        let model = ManagedObjectModel()
        model.entities = [departmentEntity, employeeEntity]
        return model
    }
}

extension DepartmentRecord {
    /// The record of a saved department.
    init(_ object: DepartmentMO) {
        self.init(id: object.objectID.key, name: object.name, budget: object.budget)
    }
}

extension EmployeeRecord {
    /// The record of a saved employee.
    init(_ object: EmployeeMO) {
        self.init(
            id: object.objectID.key,
            EmployeeInput(
                name: object.name, salary: object.salary, hired: object.hired, active: object.active,
                notes: object.notes, photo: object.photo, department: object.department?.objectID.key))
    }
}
