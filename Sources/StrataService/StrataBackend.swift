import Foundation
import Logging
import Strata
import StrataStore
import StrataSynchronization
import Synchronization

/// The service's routes on Strata, through its Core Data API: one `PersistentContainer` on a
/// durable store with persistent history, and a new background context for each request,
/// used with `perform`, so each request sees one consistent state of the store; a
/// ``ContextLimit`` bounds the requests at work in contexts at once. `Sendable`.
///
/// IDs in the API are the primary keys that end the objects' URIs; the change feed is the
/// store's persistent history (``forEachTransaction(after:_:)``), and named feed consumers are
/// the store's history consumers, whose cursors it keeps.
public final class StrataBackend: Backend {
    /// The container every request's context is made from.
    let container: PersistentContainer
    /// The one store, which keeps the history.
    let store: PersistentStore
    /// Where the backend logs.
    let logger: Logger
    /// The requests at work in contexts at once.
    let contexts: ContextLimit

    /// Opens (or creates) the store `Company.strata` in `directory`, with a block cache of
    /// `cacheSize` bytes (`nil`: the store's default), for at most `contexts` requests at work
    /// at once.
    ///
    /// - Throws: ``CoreDataError`` when the store cannot be opened; what creating the
    ///   directory throws.
    public init(
        directory: URL, logger: Logger, cacheSize: Int? = nil, contexts: Int = ContextLimit.defaultLimit
    ) throws {
        ServiceModel.registerClasses()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let container = PersistentContainer(name: "Company", managedObjectModel: ServiceModel.make())
        let description = PersistentStoreDescription(url: directory.appendingPathComponent("Company.strata"))
        description.durability = .durable
        description.isHistoryTrackingEnabled = true
        description.cacheSize = cacheSize
        container.persistentStoreDescriptions = [description]
        let failure = Lock<(any Error)?>(nil)
        container.loadPersistentStores { _, error in
            if let error { failure.withLock { $0 = error } }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        guard let store = container.persistentStoreCoordinator.persistentStores.first else {
            throw CoreDataError(.persistentStoreOperation, "the container added no store")
        }
        self.container = container
        self.store = store
        self.logger = logger
        self.contexts = ContextLimit(contexts)
        logger.info("opened the Strata store", metadata: ["path": "\(description.url?.path ?? "")"])
    }

    /// Runs `block` on a new background context once ``contexts`` has room, and returns its
    /// result, with the store's and the parser's errors turned into the ones the API answers with.
    ///
    /// The context's changes win over those another request saved since it read the objects
    /// (`mergeByPropertyObjectTrump`): two updates of one employee at once both succeed and the
    /// later save's values stay, as the SQL backend's `UPDATE`s do, instead of the later failing
    /// with a merge conflict.
    func perform<T: Sendable>(_ block: @escaping (ManagedObjectContext) throws -> T) async throws -> T {
        try await contexts.run {
            let context = container.newBackgroundContext()
            context.transactionAuthor = "strata-service"
            context.mergePolicy = MergePolicy.mergeByPropertyObjectTrump
            do {
                return try await context.perform { try block(context) }
            } catch {
                throw Self.translate(error)
            }
        }
    }

    /// `error` as the API answers it: a predicate's parse error is a bad request, a full disk
    /// is insufficient storage; others stay as they are (a 500).
    static func translate(_ error: any Error) -> any Error {
        switch error {
        case let error as FetchPredicateError:
            return ServiceError(.badRequest, error.description)
        case let error as CoreDataError:
            if let cause = error.underlyingError as? FetchPredicateError {
                return ServiceError(.badRequest, cause.description)
            }
            if let cause = error.underlyingError as? StoreError, cause.code == .diskFull {
                return ServiceError(.insufficientStorage, error.message)
            }
            return error
        case let error as StoreError where error.code == .diskFull:
            return ServiceError(.insufficientStorage, "\(error)")
        default:
            return error
        }
    }

    /// The `entity` object `key` names, realized, or `nil` when there is none.
    func existing<Object: ManagedObject>(
        _ type: Object.Type, _ entity: String, key: Int64, in context: ManagedObjectContext
    ) throws -> Object? {
        guard let id = container.persistentStoreCoordinator.objectID(entity: entity, key: key, in: store) else {
            return nil
        }
        do {
            return try context.existingObject(with: id) as? Object
        } catch let error as CoreDataError where error.code == .managedObjectReferentialIntegrity {
            return nil
        }
    }

    /// The department an input names, or `nil` for none.
    ///
    /// - Throws: ``ServiceError`` `badRequest` when no department has the ID.
    func department(_ key: Int64?, in context: ManagedObjectContext) throws -> DepartmentMO? {
        guard let key else { return nil }
        guard let department = try existing(DepartmentMO.self, ServiceModel.department, key: key, in: context) else {
            throw ServiceError(.badRequest, "no department has the ID \(key)")
        }
        return department
    }

    public func createDepartment(_ input: DepartmentInput) async throws -> DepartmentRecord {
        try await perform { context in
            let department = DepartmentMO(context: context)
            department.name = input.name
            department.budget = input.budget
            try context.save()
            return DepartmentRecord(department)
        }
    }

    public func department(id: Int64) async throws -> DepartmentRecord? {
        try await perform { context in
            try self.existing(DepartmentMO.self, ServiceModel.department, key: id, in: context).map(DepartmentRecord.init)
        }
    }

    public func deleteDepartment(id: Int64) async throws -> Bool {
        try await perform { context in
            guard let department = try self.existing(DepartmentMO.self, ServiceModel.department, key: id, in: context)
            else { return false }
            context.delete(department)
            try context.save()
            return true
        }
    }

    public func createEmployee(_ input: EmployeeInput) async throws -> EmployeeRecord {
        try await perform { context in
            let employee = EmployeeMO(context: context)
            employee.name = input.name
            employee.salary = input.salary
            employee.hired = input.hired
            employee.active = input.active
            employee.notes = input.notes
            employee.photo = input.photo
            employee.department = try self.department(input.department, in: context)
            try context.save()
            return EmployeeRecord(employee)
        }
    }

    public func employee(id: Int64) async throws -> EmployeeRecord? {
        try await perform { context in
            try self.existing(EmployeeMO.self, ServiceModel.employee, key: id, in: context).map(EmployeeRecord.init)
        }
    }

    public func updateEmployee(id: Int64, with patch: EmployeePatch) async throws -> EmployeeRecord? {
        try await perform { context in
            guard let employee = try self.existing(EmployeeMO.self, ServiceModel.employee, key: id, in: context) else {
                return nil
            }
            if let name = patch.name { employee.name = name }
            if let salary = patch.salary { employee.salary = salary }
            if let hired = patch.hired { employee.hired = hired }
            if let active = patch.active { employee.active = active }
            if let notes = patch.notes { employee.notes = notes }
            if let photo = patch.photo { employee.photo = photo }
            if let department = patch.department { employee.department = try self.department(department, in: context) }
            try context.save()
            return EmployeeRecord(employee)
        }
    }

    public func deleteEmployee(id: Int64) async throws -> Bool {
        try await perform { context in
            guard let employee = try self.existing(EmployeeMO.self, ServiceModel.employee, key: id, in: context) else {
                return false
            }
            context.delete(employee)
            try context.save()
            return true
        }
    }

    public func employees(matching query: ListQuery) async throws -> [EmployeeRecord] {
        try await perform { context in
            let request = FetchRequest<EmployeeMO>(entityName: ServiceModel.employee)
            if let format = query.predicateFormat {
                request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: nil)
            }
            request.sortDescriptors = query.sort.map { FetchSortDescriptor(key: $0.key, ascending: $0.ascending) }
            request.fetchLimit = query.limit
            request.fetchOffset = query.offset
            return try context.fetch(request).map(EmployeeRecord.init)
        }
    }

    public func importEmployees(_ employees: [EmployeeInput]) async throws -> Int {
        try EmployeeInput.checkImportable(employees)
        guard !employees.isEmpty else { return 0 }
        let objects: [[String: Any]] = employees.map { employee in
            var object: [String: Any] = [
                "name": employee.name, "salary": employee.salary, "hired": employee.hired,
                "active": employee.active, "notes": employee.notes,
            ]
            if let photo = employee.photo { object["photo"] = photo }
            return object
        }
        return try await perform { context in
            let request = BatchInsertRequest(entityName: ServiceModel.employee, objects: objects)
            request.resultType = .count
            let result = try context.execute(request) as? BatchInsertResult
            return result?.result as? Int ?? objects.count
        }
    }

    public func close() async throws {
        try container.persistentStoreCoordinator.remove(store)
    }
}
