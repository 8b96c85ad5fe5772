import Foundation
import StrataTestSupport
import Testing
import Strata

// A Core Data model layer written as Apple's documentation writes it, with `NS` deleted and
// nothing else changed (apart from the model built in code and the store's location). It must
// compile without edits; the suite below checks that it behaves as Core Data documents.

class PortedEmployee: ManagedObject {
    @Managed var name: String?
    @Managed var salary: Int64
    @Managed var department: PortedDepartment?
}

extension PortedEmployee {
    @nonobjc public class func fetchRequest() -> FetchRequest<PortedEmployee> {
        return FetchRequest<PortedEmployee>(entityName: "PortedEmployee")
    }
}

class PortedDepartment: ManagedObject {
    @Managed var name: String?

    // A computed property over key-value coding, as Core Data code writes them.
    var headcount: Int {
        return (value(forKey: "employees") as? Set<ManagedObject>)?.count ?? 0
    }
}

enum PortedModel {
    static func make() -> ManagedObjectModel {
        let employee = EntityDescription()
        employee.name = "PortedEmployee"
        employee.managedObjectClassName = NSStringFromClass(PortedEmployee.self)
        let department = EntityDescription()
        department.name = "PortedDepartment"
        department.managedObjectClassName = NSStringFromClass(PortedDepartment.self)

        let name = AttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        let salary = AttributeDescription()
        salary.name = "salary"
        salary.attributeType = .integer64AttributeType
        salary.defaultValue = 0
        let departmentName = AttributeDescription()
        departmentName.name = "name"
        departmentName.attributeType = .stringAttributeType

        let worksIn = RelationshipDescription()
        worksIn.name = "department"
        worksIn.destinationEntity = department
        worksIn.maxCount = 1
        worksIn.deleteRule = .nullifyDeleteRule
        let employees = RelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        employees.deleteRule = .cascadeDeleteRule
        worksIn.inverseRelationship = employees
        employees.inverseRelationship = worksIn

        employee.properties = [name, salary, worksIn]
        department.properties = [departmentName, employees]
        let model = ManagedObjectModel()
        model.entities = [employee, department]
        PortedEmployee.register(for: "PortedEmployee")
        PortedDepartment.register(for: "PortedDepartment")
        return model
    }
}

final class PortedStack {
    let coordinator: PersistentStoreCoordinator
    let context: ManagedObjectContext

    init(url: URL) throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: PortedModel.make())
        _ = try coordinator.addPersistentStore(type: .strata, at: url)
        context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func createEmployee(name: String, salary: Int64, departmentName: String) throws {
        try context.performAndWait {
            let employee = EntityDescription.insertNewObject(forEntityName: "PortedEmployee", into: context)
            employee.setValue(name, forKey: "name")
            employee.setValue(salary, forKey: "salary")

            let request = FetchRequest<FetchRequestResult>(entityName: "PortedDepartment")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", departmentName)
            let department =
                try context.fetch(request).first as? ManagedObject
                ?? EntityDescription.insertNewObject(forEntityName: "PortedDepartment", into: context)
            department.setValue(departmentName, forKey: "name")
            department.mutableSetValue(forKey: "employees").add(employee)
            try context.save()
        }
    }

    func wellPaid(above salary: Int64) throws -> [String] {
        var names: [String] = []
        try context.performAndWait {
            let request: FetchRequest<PortedEmployee> = PortedEmployee.fetchRequest()
            request.predicate = try FetchPredicate(checkedFormat: "salary > %d", salary)
            request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
            names = try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
        return names
    }

    func salariesByName() throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        try context.performAndWait {
            let request = FetchRequest<FetchRequestResult>(entityName: "PortedEmployee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["name", "salary"]
            request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
            rows = try context.fetch(request) as! [[String: Any]]
        }
        return rows
    }

    func employeeIDs() throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        try context.performAndWait {
            let request: FetchRequest<FetchRequestResult> = PortedEmployee.fetchRequest()
            request.resultType = .managedObjectIDResultType
            ids = try context.fetch(request) as! [ManagedObjectID]
        }
        return ids
    }

    func employeeCount() throws -> Int {
        try context.performAndWait {
            let request = FetchRequest<FetchRequestResult>(entityName: "PortedEmployee")
            return try context.count(for: request)
        }
    }
}

@Suite struct CoreDataPortTests {
    @Test func aCoreDataModelLayerPortsByDeletingNS() throws {
        let folder = TemporaryDirectory()
        do {
            let stack = try PortedStack(url: folder.store("Port"))
            let saved = PortedObserver(stack.context)
            try stack.createEmployee(name: "Ada", salary: 150_000, departmentName: "Research")
            try stack.createEmployee(name: "Grace", salary: 120_000, departmentName: "Research")
            try stack.createEmployee(name: "Edsger", salary: 90_000, departmentName: "Theory")
            #expect(saved.insertedCounts == [2, 1, 2], "department and employee, then the employee, then both")

            #expect(try stack.wellPaid(above: 100_000) == ["Ada", "Grace"])
            let rows = try stack.salariesByName()
            #expect(rows.map { $0["name"] as? String } == ["Ada", "Edsger", "Grace"])
            #expect(rows.first?["salary"] as? Int64 == 150_000)
            #expect(try stack.employeeIDs().count == 3)
            #expect(try stack.employeeCount() == 3)

            stack.context.performAndWait {
                let entity = PortedEmployee.entity()
                #expect(entity.name == "PortedEmployee")
                #expect(
                    EntityDescription.entity(forEntityName: "PortedDepartment", in: stack.context)?.name
                        == "PortedDepartment")
                let employee = PortedEmployee(context: stack.context)
                employee.setValue(nil, forKey: "name")
                do {
                    try stack.context.save()
                    Issue.record("a missing name must fail the save")
                } catch {
                    // `catch let error as NSError` does not match on Linux (the runtime does not
                    // bridge in conditional casts); bridge with `as`.
                    let error = error as NSError
                    #expect(error.domain == NSCocoaErrorDomain)
                    #expect(error.code == ValidationMissingMandatoryPropertyError)
                    #expect(error.userInfo[ValidationKeyErrorKey] as? String == "name")
                    #expect(error.userInfo[ValidationObjectErrorKey] as? ManagedObject === employee)
                }
                stack.context.rollback()
            }
            for store in stack.coordinator.persistentStores { try stack.coordinator.remove(store) }
        }
        let reopened = try PortedStack(url: folder.store("Port"))
        try reopened.context.performAndWait {
            let request: FetchRequest<PortedDepartment> = FetchRequest(entityName: "PortedDepartment")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "Research")
            let research = try #require(try reopened.context.fetch(request).first)
            #expect(research.headcount == 2)
        }
        #expect(try reopened.employeeCount() == 3)
    }
}

@Suite struct UntypedFetchRequestTests {
    /// The batch-delete idiom's untyped request, on a subclass without generated code, next to
    /// the typed request the bare call gives.
    @Test func untypedAndTypedRequestsOfOneSubclass() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["Ada", "Grace"] {
                let employee = Employee(context: context)
                employee.name = name
            }
            try context.save()
            let untyped: FetchRequest<FetchRequestResult> = Employee.fetchRequest()
            let objects = try context.fetch(untyped) as! [Employee]
            #expect(Set(objects.map(\.name)) == ["Ada", "Grace"])
            #expect(try context.count(for: untyped) == 2)
            untyped.resultType = .countResultType
            #expect(try context.fetch(untyped) as! [Int] == [2])
            let typed = Employee.fetchRequest()
            typed.predicate = try FetchPredicate(checkedFormat: "name == %@", "Ada")
            #expect(try context.fetch(typed).map(\.name) == ["Ada"])
            let wrong = FetchRequest<ManagedObjectID>(entityName: "Employee")
            #expect(throws: CoreDataError.self) { try context.fetch(wrong) }
        }
    }
}

/// Counts the inserted objects of each did-save notification, as Core Data code observes them.
final class PortedObserver: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int] = []
    private var token: NSObjectProtocol?

    init(_ context: ManagedObjectContext) {
        token = NotificationCenter.default.addObserver(
            forName: .ManagedObjectContextDidSave, object: context, queue: nil
        ) { [unowned self] notification in
            let inserted = notification.userInfo?[InsertedObjectsKey] as? Set<ManagedObject> ?? []
            lock.withLock { counts.append(inserted.count) }
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    var insertedCounts: [Int] { lock.withLock { counts } }
}
