import Foundation
import Testing
@testable import Strata

final class Department: ManagedObject {
    @Managed var name: String
    @Managed var budget: Double
    @Managed var employees: Set<Employee>
}

final class Employee: ManagedObject {
    @Managed var name: String
    @Managed var salary: Int64
    @Managed var active: Bool
    @Managed var notes: String?
    @Managed var department: Department?
}

/// The reference workloads' model, built in code.
enum GraphModel {
    static func make() -> ManagedObjectModel {
        let department = EntityDescription(name: "Department")
        department.managedObjectClassName = "Department"
        let employee = EntityDescription(name: "Employee")
        employee.managedObjectClassName = "Employee"
        let departmentName = AttributeDescription(name: "name", type: .string)
        departmentName.isOptional = false
        let budget = AttributeDescription(name: "budget", type: .double)
        budget.defaultValue = 0.0
        let employeeName = AttributeDescription(name: "name", type: .string)
        employeeName.isOptional = false
        let salary = AttributeDescription(name: "salary", type: .integer64)
        salary.defaultValue = Int64(0)
        salary.minValue = 0
        let active = AttributeDescription(name: "active", type: .boolean)
        active.defaultValue = true
        let notes = AttributeDescription(name: "notes", type: .string)
        let employees = RelationshipDescription()
        employees.name = "employees"
        employees.maxCount = 0
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
        employee.properties = [employeeName, salary, active, notes, worksIn]
        employee.indexes = [
            FetchIndexDescription(
                name: "bySalary", elements: [FetchIndexElementDescription(property: salary, collationType: .binary)])
        ]
        let model = ManagedObjectModel()
        model.entities = [department, employee]
        // Fetches create the typed subclasses even before the first instance is created.
        Department.register(for: "Department")
        Employee.register(for: "Employee")
        return model
    }

    /// A container with one Strata store at `url`, loaded.
    static func container(at url: URL, model: ManagedObjectModel = make()) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Company", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.durability = .relaxed
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        return container
    }
}

extension PersistentContainer {
    /// Closes and removes every store, releasing the store's lock so it can be opened again.
    func close() throws {
        for store in persistentStoreCoordinator.persistentStores { try persistentStoreCoordinator.remove(store) }
    }
}

/// Builds models in code for the object graph tests.
enum ModelBuilder {
    /// An entity named `name` with `properties`, whose objects are of the class `className`.
    static func entity(
        _ name: String, _ properties: [PropertyDescription] = [], isAbstract: Bool = false, className: String? = nil
    ) -> EntityDescription {
        let entity = EntityDescription(name: name, properties: properties)
        entity.isAbstract = isAbstract
        if let className { entity.managedObjectClassName = className }
        return entity
    }

    /// An attribute.
    static func attribute(
        _ name: String, _ type: AttributeDescription.AttributeType, isOptional: Bool = true, defaultValue: Any? = nil
    ) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: type)
        attribute.isOptional = isOptional
        attribute.defaultValue = defaultValue
        return attribute
    }

    /// Adds a relationship `name` from `source` to `destination` and returns it.
    @discardableResult
    static func relationship(
        _ name: String, from source: EntityDescription, to destination: EntityDescription, toMany: Bool = false,
        isOrdered: Bool = false, deleteRule: DeleteRule = .nullifyDeleteRule, minCount: Int = 0, maxCount: Int? = nil,
        isOptional: Bool = true
    ) -> RelationshipDescription {
        let relationship = RelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = maxCount ?? (toMany ? 0 : 1)
        relationship.minCount = minCount
        relationship.isOrdered = isOrdered
        relationship.deleteRule = deleteRule
        relationship.isOptional = isOptional
        source.properties.append(relationship)
        return relationship
    }

    /// Makes `first` and `second` each other's inverse.
    static func inverse(_ first: RelationshipDescription, _ second: RelationshipDescription) {
        first.inverseRelationship = second
        second.inverseRelationship = first
    }

    /// A model of `entities`.
    static func model(_ entities: [EntityDescription]) -> ManagedObjectModel {
        let model = ManagedObjectModel()
        model.entities = entities
        return model
    }
}

/// A value shared with `@Sendable` closures (notification observers, tasks) under a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try lock.withLock { try body(&value) } }
    var current: Value { lock.withLock { value } }
}

/// Carries an error out of a `@Sendable` completion handler.
final class LockedError: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?
    func set(_ error: (any Error)?) { lock.withLock { self.error = error } }
    func get() -> (any Error)? { lock.withLock { error } }
}

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that waits on a context's queue (the main queue included) from
    /// async code: long enough that it fails only on a hang. Its continuations run on Swift's
    /// cooperative pool, one thread per core, which the suite's long synchronous tests (crash
    /// kills, the PostgreSQL mirror) can hold for a minute or more on a two-core machine.
    static var waitsOnQueues: Self { .timeLimit(.minutes(10)) }
}
