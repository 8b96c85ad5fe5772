import Foundation
import Hummingbird

extension DepartmentRecord: ResponseEncodable {}
extension EmployeeRecord: ResponseEncodable {}

/// How many employees `POST /employees/import` inserted: `{"inserted": 1000}`. `Sendable`.
public struct ImportResult: ResponseCodable, Sendable, Hashable {
    /// The number of employees inserted.
    public var inserted: Int

    /// Creates a result.
    public init(inserted: Int) { self.inserted = inserted }
}

/// The service's routes over a ``Backend``:
///
/// | route | does |
/// | --- | --- |
/// | `POST /departments`, `GET`/`DELETE /departments/{id}` | create, read, delete (cascading to its employees) |
/// | `POST /employees`, `GET`/`PATCH`/`DELETE /employees/{id}` | create, read, update, delete |
/// | `GET /employees?where=&sort=&limit=&offset=` | list with a predicate, an order and a page |
/// | `POST /employees/import` | insert an array of employees in one batch insert |
/// | `GET /feed?after=&consumer=&limit=` | the change feed, as server-sent events (``FeedRoute``) |
/// | `GET /health`, `GET /metrics` | liveness, and the metrics in Prometheus's text format |
public enum ServiceRoutes {
    /// Adds the routes over `backend` to `router`.
    public static func add<Context: RequestContext>(to router: Router<Context>, backend: any Backend) {
        router.get("health") { _, _ in "ok" }
        router.post("departments") { request, context -> EditedResponse<DepartmentRecord> in
            let input = try await request.decode(as: DepartmentInput.self, context: context)
            return EditedResponse(status: .created, response: try await backend.createDepartment(input))
        }
        router.get("departments/:id") { _, context -> DepartmentRecord in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await backend.department(id: id).orNotFound("department", id)
        }
        router.delete("departments/:id") { _, context -> HTTPResponse.Status in
            let id = try context.parameters.require("id", as: Int64.self)
            guard try await backend.deleteDepartment(id: id) else { throw ServiceError.notFound("department", id) }
            return .noContent
        }
        router.post("employees") { request, context -> EditedResponse<EmployeeRecord> in
            let input = try await request.decode(as: EmployeeInput.self, context: context)
            return EditedResponse(status: .created, response: try await backend.createEmployee(input))
        }
        router.post("employees/import") { request, context -> EditedResponse<ImportResult> in
            let inputs = try await request.decode(as: [EmployeeInput].self, context: context)
            return EditedResponse(
                status: .created, response: ImportResult(inserted: try await backend.importEmployees(inputs)))
        }
        router.get("employees") { request, _ -> [EmployeeRecord] in
            let query = try ListQuery(parameters: request.queryDictionary, attributes: EmployeeRecord.attributeNames)
            return try await backend.employees(matching: query)
        }
        router.get("employees/:id") { _, context -> EmployeeRecord in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await backend.employee(id: id).orNotFound("employee", id)
        }
        router.patch("employees/:id") { request, context -> EmployeeRecord in
            let id = try context.parameters.require("id", as: Int64.self)
            let patch = try await request.decode(as: EmployeePatch.self, context: context)
            return try await backend.updateEmployee(id: id, with: patch).orNotFound("employee", id)
        }
        router.delete("employees/:id") { _, context -> HTTPResponse.Status in
            let id = try context.parameters.require("id", as: Int64.self)
            guard try await backend.deleteEmployee(id: id) else { throw ServiceError.notFound("employee", id) }
            return .noContent
        }
        FeedRoute.add(to: router, backend: backend)
    }
}

extension Request {
    /// The query parameters as forms and `curl --data-urlencode` encode them (`+` for a space,
    /// then percent-encoding), the last value of a repeated name winning.
    var queryDictionary: [String: String] {
        func decoded(_ part: Substring) -> String {
            let spaced = part.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        var parameters: [String: String] = [:]
        for pair in (uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            parameters[decoded(parts[0])] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return parameters
    }
}

extension ServiceError {
    /// No `entity` has `id`.
    static func notFound(_ entity: String, _ id: Int64) -> ServiceError {
        ServiceError(.notFound, "no \(entity) has the ID \(id)")
    }
}

extension Optional {
    /// The value, or ``ServiceError`` `notFound` for the `entity` `id` when there is none.
    func orNotFound(_ entity: String, _ id: Int64) throws(ServiceError) -> Wrapped {
        guard let self else { throw ServiceError.notFound(entity, id) }
        return self
    }
}
