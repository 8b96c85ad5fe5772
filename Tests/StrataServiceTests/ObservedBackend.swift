import Foundation
import StrataService

/// A backend that forwards to another and lets a test see and hold requests: it signals when a
/// change feed's tail starts, and can hold each employee insert until the test releases it.
final class ObservedBackend: Backend {
    /// The backend doing the work.
    let base: any Backend
    /// Whether ``createEmployee(_:)`` waits for ``release()`` before inserting.
    let holdsInserts: Bool
    /// Yields each time a feed's tail starts.
    let tailsStarted: AsyncStream<Void>
    private let tailStarted: AsyncStream<Void>.Continuation
    /// Yields each time an insert is held.
    let insertsHeld: AsyncStream<Void>
    private let insertHeld: AsyncStream<Void>.Continuation
    /// Yields once per released insert.
    private let releases: AsyncStream<Void>
    private let released: AsyncStream<Void>.Continuation

    /// Wraps `base`.
    init(_ base: any Backend, holdsInserts: Bool = false) {
        self.base = base
        self.holdsInserts = holdsInserts
        (tailsStarted, tailStarted) = AsyncStream.makeStream()
        (insertsHeld, insertHeld) = AsyncStream.makeStream()
        (releases, released) = AsyncStream.makeStream()
    }

    /// Lets one held insert go on.
    func release() { released.yield() }

    func createEmployee(_ input: EmployeeInput) async throws -> EmployeeRecord {
        if holdsInserts {
            insertHeld.yield()
            for await _ in releases { break }
        }
        return try await base.createEmployee(input)
    }

    func forEachTransaction(after token: Int64, _ body: (FeedTransaction) async throws -> Void) async throws {
        tailStarted.yield()
        try await base.forEachTransaction(after: token, body)
    }

    func createDepartment(_ input: DepartmentInput) async throws -> DepartmentRecord {
        try await base.createDepartment(input)
    }
    func department(id: Int64) async throws -> DepartmentRecord? { try await base.department(id: id) }
    func deleteDepartment(id: Int64) async throws -> Bool { try await base.deleteDepartment(id: id) }
    func employee(id: Int64) async throws -> EmployeeRecord? { try await base.employee(id: id) }
    func updateEmployee(id: Int64, with patch: EmployeePatch) async throws -> EmployeeRecord? {
        try await base.updateEmployee(id: id, with: patch)
    }
    func deleteEmployee(id: Int64) async throws -> Bool { try await base.deleteEmployee(id: id) }
    func employees(matching query: ListQuery) async throws -> [EmployeeRecord] {
        try await base.employees(matching: query)
    }
    func importEmployees(_ employees: [EmployeeInput]) async throws -> Int { try await base.importEmployees(employees) }
    func currentToken() async throws -> Int64 { try await base.currentToken() }
    func oldestToken() async throws -> Int64 { try await base.oldestToken() }
    func deleteHistory(before date: Date) async throws { try await base.deleteHistory(before: date) }
    func consumerToken(named name: String) async throws -> Int64 { try await base.consumerToken(named: name) }
    func advanceConsumer(named name: String, to token: Int64) async throws {
        try await base.advanceConsumer(named: name, to: token)
    }
    func close() async throws { try await base.close() }
}

extension AsyncStream {
    /// Waits for the next element.
    func next() async -> Element? {
        var iterator = makeAsyncIterator()
        return await iterator.next()
    }
}
