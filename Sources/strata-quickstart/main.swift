// The quickstart `make demo` runs: a Core Data model, a container, objects saved, the store
// reopened, fetched with a predicate, faults fired, relationships followed, history read and
// the log compacted.
import Foundation
import Strata

/// A department, with a typed to-many relationship.
final class Department: ManagedObject {
    @Managed var name: String
    @Managed var employees: Set<Employee>
}

/// An employee, with a typed to-one relationship.
final class Employee: ManagedObject {
    @Managed var name: String
    @Managed var salary: Int64
    @Managed var department: Department?
}

/// The model, built in code as one would in Xcode's editor.
func makeModel() -> ManagedObjectModel {
    let department = EntityDescription(name: "Department")
    department.managedObjectClassName = "Department"
    let employee = EntityDescription(name: "Employee")
    employee.managedObjectClassName = "Employee"
    let employees = RelationshipDescription()
    employees.name = "employees"
    employees.maxCount = 0
    employees.deleteRule = .cascadeDeleteRule
    let worksIn = RelationshipDescription()
    worksIn.name = "department"
    worksIn.deleteRule = .nullifyDeleteRule
    employees.destinationEntity = employee
    employees.inverseRelationship = worksIn
    worksIn.destinationEntity = department
    worksIn.inverseRelationship = employees
    let salary = AttributeDescription(name: "salary", type: .integer64)
    salary.defaultValue = Int64(0)
    department.properties = [AttributeDescription(name: "name", type: .string), employees]
    employee.properties = [AttributeDescription(name: "name", type: .string), salary, worksIn]
    employee.indexes = [
        FetchIndexDescription(
            name: "bySalary", elements: [FetchIndexElementDescription(property: salary, collationType: .binary)])
    ]
    let model = ManagedObjectModel()
    model.entities = [department, employee]
    return model
}

/// Where the quickstart keeps its store: `$STRATA_QUICKSTART_PATH`, or the container's
/// default directory (`$XDG_DATA_HOME/strata`, `~/.local/share/strata`).
func storeURL() -> URL {
    if let path = ProcessInfo.processInfo.environment["STRATA_QUICKSTART_PATH"] { return URL(fileURLWithPath: path) }
    return PersistentContainer.defaultDirectoryURL().appendingPathComponent("Quickstart.strata")
}

/// A container on the quickstart's store, with history tracking on.
func loadContainer(_ model: ManagedObjectModel) throws -> PersistentContainer {
    let container = PersistentContainer(name: "Quickstart", managedObjectModel: model)
    let description = PersistentStoreDescription(url: storeURL())
    description.isHistoryTrackingEnabled = true
    container.persistentStoreDescriptions = [description]
    var loadError: Error?
    container.loadPersistentStores { _, error in loadError = error }
    if let loadError { throw loadError }
    return container
}

let model = makeModel()
try? FileManager.default.removeItem(at: storeURL())
print("Creating a store at \(storeURL().path)")
var container = try loadContainer(model)
var context = container.newBackgroundContext()
context.transactionAuthor = "quickstart"
try context.performAndWait {
    let engineering = Department(context: context)
    engineering.name = "Engineering"
    let sales = Department(context: context)
    sales.name = "Sales"
    for index in 1...1_000 {
        let employee = Employee(context: context)
        employee.name = "Employee \(index)"
        employee.salary = Int64(40_000 + index * 97 % 120_000)
        employee.department = index.isMultiple(of: 4) ? sales : engineering
    }
    try context.save()
    print("Saved 2 departments and 1000 employees (durably) in one transaction")
}

print("Closing and reopening the store")
for store in container.persistentStoreCoordinator.persistentStores {
    try container.persistentStoreCoordinator.remove(store)
}
container = try loadContainer(model)
context = container.newBackgroundContext()
context.transactionAuthor = "quickstart"
try context.performAndWait {
    let request = Employee.fetchRequest()
    request.predicate = FetchPredicate(format: "salary > %@ AND department.name == %@", 130_000, "Engineering")
    request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
    request.fetchLimit = 3
    let top = try context.fetch(request)
    print("Top earners over 130,000 in Engineering: " + top.map { "\($0.name) (\($0.salary))" }.joined(separator: ", "))
    print("How the fetch ran: \(try context.explain(request))")
    let counted = try context.count(for: try FetchRequest<Employee>(predicate: #Predicate { $0.salary > 130_000 }))
    print("Employees over 130,000 (a #Predicate, counted from the salary index): \(counted)")

    let star = top[0]
    let department = star.department!
    print("\(star.name) works in a department that is still a fault: isFault = \(department.isFault)")
    print("Reading its name fires the fault: \(department.name); isFault = \(department.isFault)")
    print("Its employees, a to-many relationship found through the inverse's index: \(department.employees.count)")

    star.salary += 10_000
    print("Raised \(star.name) to \(star.salary); the context has changes: \(context.hasChanges)")
    try context.save()

    let sales = try context.fetch(Department.fetchRequest()).first { $0.name == "Sales" }!
    context.delete(sales)
    try context.save()
    print(
        "Deleted Sales; its employees went with it (cascade): \(try context.count(for: Employee.fetchRequest())) employees left"
    )
}

print("History (Core Data's persistent history API):")
try context.performAndWait {
    let result =
        try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        as! PersistentHistoryResult
    let transactions = result.result as? [PersistentHistoryTransaction] ?? []
    for transaction in transactions {
        let changes = transaction.changes ?? []
        let count = { (type: PersistentHistoryChangeType) in changes.filter { $0.changeType == type }.count }
        print(
            "  #\(transaction.transactionNumber) by \(transaction.author ?? "-"): "
                + "\(count(.insert)) inserts, \(count(.update)) updates, \(count(.delete)) deletes")
    }
    if let last = transactions.last {
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: last.token))
    }
}
let engine = container.persistentStoreCoordinator.persistentStores[0].engineStore!
let report = try engine.compact()
print(
    "Deleted the history and compacted \(report.segmentsCompacted) segment(s): \(report.bytesBefore) -> \(report.bytesAfter) bytes"
)
try context.performAndWait {
    print("Still there after compaction: \(try context.count(for: Employee.fetchRequest())) employees")
}
for store in container.persistentStoreCoordinator.persistentStores {
    try container.persistentStoreCoordinator.remove(store)
}
print("Done. Inspect the store with: swift run strata info \(storeURL().path)")
