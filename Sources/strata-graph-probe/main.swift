// strata-graph-probe: opens a Strata store of the Department/Employee model in a process of its
// own and prints what it holds as JSON, so tests can check that another process sees a save.
//
//     strata-graph-probe <store>                                   print the store
//     strata-graph-probe <store> add <name> <salary> <department>  add an employee, save, print
//     strata-graph-probe <store> save-concurrently <contexts>      save from many contexts until killed
//     strata-graph-probe <store> exhaust-files <saves> <bytes>     save and compact out of descriptors
//     strata-graph-probe <store> fill <saves> <bytes> [<MiB>]      save under an address-space limit
//     strata-graph-probe <store> batch-requests <seed> <groups>    batch insert, update, delete (BatchRequests.swift)
//
// Exit status 0 on success, 1 with a message on standard error otherwise.

import Foundation
import Strata

/// The model the tests' `GraphModel.make()` builds; the two must stay identical.
func makeModel() -> ManagedObjectModel {
    let department = EntityDescription(name: "Department")
    let employee = EntityDescription(name: "Employee")
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
    return model
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strata-graph-probe: \(message)\n".utf8))
    exit(1)
}

func run(_ arguments: [String]) throws -> Data {
    if arguments.count == 3 && arguments[1] == "save-concurrently", let contexts = Int(arguments[2]) {
        try saveConcurrently(store: URL(fileURLWithPath: arguments[0]), contexts: contexts)
    }
    if arguments.count == 4 && arguments[1] == "batch-requests", let seed = Int(arguments[2]),
        let groups = Int(arguments[3])
    {
        try runBatchRequests(store: URL(fileURLWithPath: arguments[0]), seed: seed, groups: groups)
    }
    if arguments.count >= 4 && ["exhaust-files", "fill"].contains(arguments[1]) {
        try resourceLimits(store: URL(fileURLWithPath: arguments[0]), Array(arguments.dropFirst()))
    }
    guard arguments.count == 1 || (arguments.count == 5 && arguments[1] == "add") else {
        fail("usage: strata-graph-probe <store> [add <name> <salary> <department>]")
    }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: makeModel())
    let url = URL(fileURLWithPath: arguments[0])
    var store = try coordinator.addPersistentStore(type: .strata, at: url)
    if store.isReadOnly {
        // A store that keeps persistent history opens read-only without the key: open it as an
        // app that keeps history does.
        try coordinator.remove(store)
        store = try coordinator.addPersistentStore(
            type: .strata, at: url, options: [PersistentHistoryTrackingKey: true])
    }
    defer { try? coordinator.remove(store) }
    let context = ManagedObjectContext(.privateQueue)
    context.persistentStoreCoordinator = coordinator
    return try context.performAndWait {
        if arguments.count == 5 {
            guard let salary = Int64(arguments[3]) else { fail("the salary \(arguments[3]) is not a number") }
            let byName = FetchRequest<ManagedObject>(entityName: "Department")
            byName.predicate = FetchPredicate(key: "name", .equalTo, arguments[4])
            guard let department = try context.fetch(byName).first else { fail("no department named \(arguments[4])") }
            let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue(arguments[2], forKey: "name")
            employee.setValue(salary, forKey: "salary")
            employee.setValue(department, forKey: "department")
            try context.save()
        }
        let byName = [FetchSortDescriptor(key: "name")]
        let departmentRequest = FetchRequest<ManagedObject>(entityName: "Department")
        departmentRequest.sortDescriptors = byName
        let departments = try context.fetch(departmentRequest).map { department -> [String: Any] in
            let members = department.value(forKey: "employees") as? Set<ManagedObject> ?? []
            return [
                "name": department.value(forKey: "name") ?? NSNull(),
                "budget": department.value(forKey: "budget") ?? NSNull(),
                "employees": members.map { $0.value(forKey: "name") as? String ?? "" }.sorted(),
            ]
        }
        let employeeRequest = FetchRequest<ManagedObject>(entityName: "Employee")
        employeeRequest.sortDescriptors = byName
        let employees = try context.fetch(employeeRequest).map { employee -> [String: Any] in
            let department = employee.value(forKey: "department") as? ManagedObject
            return [
                "name": employee.value(forKey: "name") ?? NSNull(),
                "salary": employee.value(forKey: "salary") ?? NSNull(),
                "active": employee.value(forKey: "active") ?? NSNull(),
                "notes": employee.value(forKey: "notes") ?? NSNull(),
                "department": department?.value(forKey: "name") ?? NSNull(),
            ]
        }
        let counts = [
            "Department": try context.count(for: FetchRequest<ManagedObject>(entityName: "Department")),
            "Employee": try context.count(for: FetchRequest<ManagedObject>(entityName: "Employee")),
        ]
        let report: [String: Any] = ["departments": departments, "employees": employees, "counts": counts]
        return try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
    }
}

do {
    let output = try run(Array(CommandLine.arguments.dropFirst()))
    FileHandle.standardOutput.write(output)
    FileHandle.standardOutput.write(Data("\n".utf8))
} catch {
    fail("\(error)")
}
