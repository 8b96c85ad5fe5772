import Foundation

/// The store behind the service's routes: Strata (``StrataBackend``) or SQLite through GRDB
/// (`GRDBBackend`), answering with the same records and errors. `Sendable`: the routes call it
/// from every request's task at once.
///
/// Each call is one unit of work with a consistent view of the data: one background context
/// (Strata) or one database access (GRDB). Writes are durable when they return.
public protocol Backend: Sendable {
    /// Inserts a department.
    func createDepartment(_ input: DepartmentInput) async throws -> DepartmentRecord
    /// The department `id`, or `nil` when there is none.
    func department(id: Int64) async throws -> DepartmentRecord?
    /// Deletes the department `id` and, by the model's cascade rule, its employees; `false`
    /// when there was none.
    func deleteDepartment(id: Int64) async throws -> Bool

    /// Inserts an employee.
    ///
    /// - Throws: ``ServiceError`` `badRequest` when the department it names does not exist.
    func createEmployee(_ input: EmployeeInput) async throws -> EmployeeRecord
    /// The employee `id`, or `nil` when there is none.
    func employee(id: Int64) async throws -> EmployeeRecord?
    /// Applies `patch` to the employee `id` and returns it; `nil` when there is none.
    ///
    /// - Throws: ``ServiceError`` `badRequest` when the department it names does not exist.
    func updateEmployee(id: Int64, with patch: EmployeePatch) async throws -> EmployeeRecord?
    /// Deletes the employee `id`; `false` when there was none.
    func deleteEmployee(id: Int64) async throws -> Bool
    /// The employees `query` selects, in its order.
    ///
    /// - Throws: ``ServiceError`` `badRequest` with the parser's message for a predicate that
    ///   does not parse or names what the entity does not have.
    func employees(matching query: ListQuery) async throws -> [EmployeeRecord]
    /// Inserts `employees` in one transaction without creating objects one by one (a batch
    /// insert); returns how many it inserted.
    ///
    /// - Throws: ``ServiceError`` `badRequest` when one names a department: a batch insert sets
    ///   no relationships, as in Core Data.
    func importEmployees(_ employees: [EmployeeInput]) async throws -> Int

    /// The token of the last committed transaction: a feed started after it sees only what
    /// commits next.
    func currentToken() async throws -> Int64
    /// The token consumer `name` has reached, registering it at the oldest retained history
    /// when it is new.
    func consumerToken(named name: String) async throws -> Int64
    /// Moves consumer `name`'s cursor to `token` (never back), keeping the history after it.
    func advanceConsumer(named name: String, to token: Int64) async throws
    /// The oldest token a feed can start after: the history after it is kept, the history up to
    /// it may have been deleted (``deleteHistory(before:)``).
    func oldestToken() async throws -> Int64
    /// Deletes the history of the transactions committed before `date`, except what a named
    /// consumer has not read yet, raising ``oldestToken()``.
    func deleteHistory(before date: Date) async throws
    /// Calls `body` with each transaction after `token`, in order, then with each new one as it
    /// commits, until `body` throws or the task is cancelled (it then returns).
    ///
    /// - Throws: ``ServiceError`` `tokenExpired` when the history after `token` (or after the
    ///   last transaction delivered, for a feed that fell behind) was deleted.
    func forEachTransaction(
        after token: Int64, _ body: (FeedTransaction) async throws -> Void
    ) async throws

    /// Closes the store once the routes have finished: the last call.
    func close() async throws
}
