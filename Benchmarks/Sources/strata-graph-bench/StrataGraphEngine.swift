import BenchSupport
import Foundation
import Strata
import Synchronization
import Workloads

/// Strata through its Core Data API: a `PersistentContainer` on one Strata store, background
/// contexts used with `performAndWait`, and the typed `@Managed` subclasses.
///
/// Employees are found again the way a Core Data app does it: the URI of each object ID is kept
/// after the insert (``didInsertAll()``), and turned back into an ID of the current coordinator
/// with `managedObjectID(forURIRepresentation:)`.
final class StrataGraphEngine: GraphEngine {
    typealias Reference = ManagedObjectID
    static let name = "Strata"

    private let directory: URL
    private let durability: BenchDurability
    private let access: GraphAccess
    private let predicateStyle: PredicateStyle
    /// Built once, as an app loads its model once; every container of the run shares it.
    private let model: ManagedObjectModel
    private var container: PersistentContainer?
    /// Whether ``open()`` adds the store with `PersistentHistoryTrackingKey` set (W9).
    var historyTracking = false

    /// The object IDs of the last W1, in data set order, until ``didInsertAll()`` archives them.
    private var insertedEmployeeIDs: [ManagedObjectID] = []
    private var insertedDepartmentIDs: [ManagedObjectID] = []
    /// The URI of employee `key`, at `key - 1`.
    private var employeeURIs: [URL] = []
    /// The URI of department `key`, at `key - 1`.
    private var departmentURIs: [URL] = []

    private var storeURL: URL { directory.appendingPathComponent("Company.strata") }

    init(directory: URL, durability: BenchDurability, access: GraphAccess, predicateStyle: PredicateStyle) {
        self.directory = directory
        self.durability = durability
        self.access = access
        self.predicateStyle = predicateStyle
        GraphModel.registerClasses()
        model = GraphModel.make()
    }

    func open() throws {
        let container = PersistentContainer(name: "Company", managedObjectModel: model)
        let description = PersistentStoreDescription(url: storeURL)
        description.durability = durability == .durable ? .durable : .relaxed
        description.isHistoryTrackingEnabled = historyTracking
        container.persistentStoreDescriptions = [description]
        let failure = Mutex<(any Error)?>(nil)
        container.loadPersistentStores { _, error in
            if let error { failure.withLock { $0 = error } }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        self.container = container
    }

    func close() throws {
        guard let container else { return }
        self.container = nil
        let coordinator = container.persistentStoreCoordinator
        for store in coordinator.persistentStores {
            try coordinator.remove(store)
        }
    }

    var opened: PersistentContainer {
        get throws { try container.orThrow("Strata: the container is not open") }
    }

    private func entity(_ name: String) throws -> EntityDescription {
        try opened.managedObjectModel.entitiesByName[name].orThrow("Strata: no entity \(name)")
    }

    func insertAll(_ dataset: Dataset) throws {
        let context = try opened.newBackgroundContext()
        let departmentEntity = try entity(GraphModel.departmentEntity)
        let employeeEntity = try entity(GraphModel.employeeEntity)
        let ids = try context.performAndWait {
            var departments: [DepartmentMO] = []
            departments.reserveCapacity(dataset.departments.count)
            for department in dataset.departments {
                let object = DepartmentMO(entity: departmentEntity, insertInto: context)
                switch access {
                case .typed:
                    object.name = department.name
                    object.budget = department.budget
                case .kvc:
                    object.setValue(department.name, forKey: "name")
                    object.setValue(department.budget, forKey: "budget")
                }
                departments.append(object)
            }
            var employees: [EmployeeMO] = []
            employees.reserveCapacity(dataset.employees.count)
            for part in dataset.saveParts {
                for employee in dataset.employees[part] {
                    let object = EmployeeMO(entity: employeeEntity, insertInto: context)
                    switch access {
                    case .typed:
                        object.assign(employee)
                        object.department = departments[employee.department]
                    case .kvc:
                        object.setValue(employee.name, forKey: "name")
                        object.setValue(employee.salary, forKey: "salary")
                        object.setValue(employee.hired, forKey: "hired")
                        object.setValue(employee.active, forKey: "active")
                        object.setValue(employee.notes, forKey: "notes")
                        if let photo = employee.photo { object.setValue(photo, forKey: "photo") }
                        object.setValue(departments[employee.department], forKey: "department")
                    }
                    employees.append(object)
                }
                try context.save()
            }
            return (departments.map(\.objectID), employees.map(\.objectID))
        }
        insertedDepartmentIDs = ids.0
        insertedEmployeeIDs = ids.1
    }

    func didInsertAll() throws {
        guard let temporary = (insertedDepartmentIDs + insertedEmployeeIDs).first(where: \.isTemporaryID) else {
            departmentURIs = insertedDepartmentIDs.map { $0.uriRepresentation() }
            employeeURIs = insertedEmployeeIDs.map { $0.uriRepresentation() }
            insertedDepartmentIDs = []
            insertedEmployeeIDs = []
            return
        }
        throw BenchError("Strata: \(temporary) is still temporary after the save")
    }

    private func id(_ uris: [URL], key: Int64, in coordinator: PersistentStoreCoordinator) throws -> ManagedObjectID {
        guard key >= 1, key <= uris.count else { throw BenchError("Strata: no URI for key \(key)") }
        return try coordinator.managedObjectID(forURIRepresentation: uris[Int(key - 1)])
            .orThrow("Strata: the coordinator does not resolve \(uris[Int(key - 1)])")
    }

    func employeeCount() throws -> Int {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            try context.count(for: FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity))
        }
    }

    func census() throws -> (firstDepartmentEmployees: Int, salarySum: Int64) {
        let container = try opened
        let context = container.newBackgroundContext()
        let departmentID = try id(
            departmentURIs, key: Dataset.departmentKey(0), in: container.persistentStoreCoordinator)
        return try context.performAndWait {
            let department = try context.existingObject(with: departmentID) as! DepartmentMO
            let members = department.employees.count
            var sum: Int64 = 0
            for employee in try context.fetch(FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity)) {
                sum &+= employee.salary
            }
            return (members, sum)
        }
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        let container = try opened
        let objectID = try id(employeeURIs, key: key, in: container.persistentStoreCoordinator)
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let employee = try context.existingObject(with: objectID) as! EmployeeMO
            return (employee.name, employee.salary)
        }
    }

    func references(for keys: [Int64]) throws -> [ManagedObjectID] {
        let coordinator = try opened.persistentStoreCoordinator
        return try keys.map { try id(employeeURIs, key: $0, in: coordinator) }
    }

    /// Faults: `object(with:)` hands back an unrealized object; reading `name` fires it.
    func lookUp(_ references: [ManagedObjectID]) throws -> Int64 {
        let context = try opened.newBackgroundContext()
        return context.performAndWait {
            var checksum: Int64 = 0
            for objectID in references {
                let employee = context.object(with: objectID) as! EmployeeMO
                switch access {
                case .typed:
                    let name = employee.name
                    checksum &+= employee.salary &+ Int64(name.utf8.count)
                case .kvc:
                    let name = employee.value(forKey: "name") as! String
                    checksum &+= (employee.value(forKey: "salary") as! Int64) &+ Int64(name.utf8.count)
                }
            }
            return checksum
        }
    }

    func scanNotes() throws -> (count: Int, notesBytes: Int64) {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            let employees = try context.fetch(FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity))
            var bytes: Int64 = 0
            for employee in employees {
                switch access {
                case .typed: bytes += Int64(employee.notes.utf8.count)
                case .kvc: bytes += Int64((employee.value(forKey: "notes") as! String).utf8.count)
                }
            }
            return (employees.count, bytes)
        }
    }

    /// `salary > minimumSalary AND active == true`, built in code or parsed from a format string
    /// as `predicateStyle` says.
    private func topEarnersPredicate(above minimumSalary: Int64) throws -> FetchPredicate {
        switch predicateStyle {
        case .code:
            return FetchPredicate(andPredicateWithSubpredicates: [
                FetchPredicate(key: "salary", .greaterThan, minimumSalary),
                FetchPredicate(key: "active", .equalTo, true),
            ])
        case .format:
            return try FetchPredicate(checkedFormat: "salary > %@ AND active == YES", argumentArray: [minimumSalary])
        }
    }

    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner] {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            var earners: [TopEarner] = []
            for _ in 0..<repetitions {
                let request = FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity)
                request.predicate = try topEarnersPredicate(above: minimumSalary)
                request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
                request.fetchLimit = limit
                earners = try context.fetch(request).map { employee in
                    switch access {
                    case .typed:
                        return TopEarner(salary: employee.salary, active: employee.active)
                    case .kvc:
                        return TopEarner(
                            salary: employee.value(forKey: "salary") as! Int64,
                            active: employee.value(forKey: "active") as! Bool)
                    }
                }
            }
            return earners
        }
    }

    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            var count = 0
            for _ in 0..<repetitions {
                let request = FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity)
                request.predicate = try topEarnersPredicate(above: minimumSalary)
                count = try context.count(for: request)
            }
            return count
        }
    }

    func updateSalaries(_ references: [ManagedObjectID], salaries: [Int64]) throws {
        let context = try opened.newBackgroundContext()
        try context.performAndWait {
            for (objectID, salary) in zip(references, salaries) {
                let employee = try context.existingObject(with: objectID) as! EmployeeMO
                switch access {
                case .typed: employee.salary = salary
                case .kvc: employee.setValue(salary, forKey: "salary")
                }
            }
            try context.save()
        }
    }
}
