import Foundation
import StrataService
import StrataTestSupport
import Testing

/// The routes end to end over loopback, on both backends: what a client of the API relies on.
@Suite("Service routes")
struct ServiceRouteTests {
    /// A fixed hiring date, a whole second (the API's dates are ISO 8601 to the second).
    static let hired = Date(timeIntervalSince1970: 1_500_000_000)

    /// Employee `index` of a small roster: salaries 40_000, 50_000, …, every third one inactive.
    static func employee(_ index: Int, department: Int64? = nil) -> EmployeeInput {
        EmployeeInput(
            name: "Employee \(index)", salary: Int64(40_000 + 10_000 * index), hired: hired,
            active: index % 3 != 0, notes: "notes of \(index)", department: department)
    }

    @Test("create, read, update, list and delete", arguments: BackendKind.allCases)
    func crud(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url)
        do {
            let sales = try await service.json(
                DepartmentRecord.self, "POST", "/departments", body: DepartmentInput(name: "Sales", budget: 1_000.5),
                status: 201)
            #expect(sales.name == "Sales" && sales.budget == 1_000.5)
            #expect(try await service.json(DepartmentRecord.self, "GET", "/departments/\(sales.id)") == sales)

            var created: [EmployeeRecord] = []
            for index in 0..<6 {
                created.append(
                    try await service.json(
                        EmployeeRecord.self, "POST", "/employees", body: Self.employee(index, department: sales.id),
                        status: 201))
            }
            #expect(Set(created.map(\.id)).count == 6)
            #expect(created[2].department == sales.id && created[2].hired == Self.hired)
            #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(created[2].id)") == created[2])

            let raised = try await service.json(
                EmployeeRecord.self, "PATCH", "/employees/\(created[1].id)", body: EmployeePatch(salary: 500_000))
            #expect(raised.salary == 500_000 && raised.name == created[1].name)
            #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(created[1].id)").salary == 500_000)

            // salary > 60_000 AND active: indexes 1 (raised), 4 and 5 (3 is inactive), highest first.
            let rich = try await service.json(
                [EmployeeRecord].self, "GET",
                "/employees?where=\(Self.query("salary > 60000 AND active == YES"))&sort=-salary")
            #expect(rich.map(\.name) == ["Employee 1", "Employee 5", "Employee 4"])
            let page = try await service.json(
                [EmployeeRecord].self, "GET", "/employees?sort=name&limit=2&offset=1")
            #expect(page.map(\.name) == ["Employee 1", "Employee 2"])
            // A `+` encoded as %2B is a plus, not a space: no employee's name has one.
            let plus = try await service.json(
                [EmployeeRecord].self, "GET", "/employees?where=\(Self.query("name CONTAINS '+'"))")
            #expect(plus.isEmpty)
            let prefixed = try await service.json(
                [EmployeeRecord].self, "GET", "/employees?where=\(Self.query("name BEGINSWITH[c] 'employee 5'"))")
            #expect(prefixed.map(\.id) == [created[5].id])

            #expect(try await service.send("DELETE", "/employees/\(created[0].id)").status == 204)
            #expect(try await service.send("GET", "/employees/\(created[0].id)").status == 404)
            #expect(try await service.send("DELETE", "/employees/\(created[0].id)").status == 404)
            // Deleting the department cascades to its employees.
            #expect(try await service.send("DELETE", "/departments/\(sales.id)").status == 204)
            #expect(try await service.json([EmployeeRecord].self, "GET", "/employees").isEmpty)
            #expect(try await service.send("GET", "/departments/\(sales.id)").status == 404)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test(
        "concurrent updates of one employee all succeed, the last one's values staying", arguments: BackendKind.allCases
    )
    func concurrentUpdates(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url)
        do {
            let employee = try await service.json(
                EmployeeRecord.self, "POST", "/employees", body: Self.employee(1), status: 201)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for salary in 1...32 {
                    group.addTask {
                        try await service.send(
                            "PATCH", "/employees/\(employee.id)", body: EmployeePatch(salary: Int64(salary))
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            let stored = try await service.json(EmployeeRecord.self, "GET", "/employees/\(employee.id)")
            #expect((1...32).contains(stored.salary) && stored.name == employee.name)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("a bulk import inserts every employee in one transaction", arguments: BackendKind.allCases)
    func bulkImport(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url)
        do {
            let roster = (0..<250).map { Self.employee($0) }
            let result = try await service.json(
                ImportResult.self, "POST", "/employees/import", body: roster, status: 201)
            #expect(result.inserted == 250)
            let all = try await service.json([EmployeeRecord].self, "GET", "/employees?limit=1000&sort=salary")
            #expect(all.map(\.name) == roster.map(\.name))
            // A batch insert sets no relationships: an employee naming a department is refused whole.
            let withDepartment = [Self.employee(1), Self.employee(2, department: 1)]
            let refused = try await service.send("POST", "/employees/import", body: withDepartment)
            #expect(refused.status == 400)
            #expect(try await service.json([EmployeeRecord].self, "GET", "/employees?limit=1000").count == 250)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("a service with the smallest cache serves every employee", arguments: BackendKind.allCases)
    func smallCache(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let cacheSize = try ServiceConfiguration.cacheSize(mebibytes: "1", source: "--cache-size")
        #expect(cacheSize == 1 << 20)
        let service = try await RunningService.start(kind, in: directory.url, cacheSize: cacheSize)
        do {
            // Notes of 2 KB: about 5 MB of rows, five times the cache.
            let roster = (0..<2_500).map { index in
                var employee = Self.employee(index)
                employee.notes = String(repeating: "\(index % 10)", count: 2_000)
                return employee
            }
            for part in stride(from: 0, to: roster.count, by: 500) {
                let slice = Array(roster[part..<(part + 500)])
                let result = try await service.json(
                    ImportResult.self, "POST", "/employees/import", body: slice, status: 201)
                #expect(result.inserted == 500)
            }
            var all: [EmployeeRecord] = []
            for offset in stride(from: 0, to: roster.count, by: 1_000) {
                all += try await service.json(
                    [EmployeeRecord].self, "GET", "/employees?limit=1000&offset=\(offset)&sort=salary")
            }
            #expect(all.map(\.name) == roster.map(\.name))
            #expect(all.map(\.notes) == roster.map(\.notes))
            for record in all.shuffled().prefix(50) {
                #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(record.id)") == record)
            }
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("the cache size comes from STRATA_SERVICE_CACHE_SIZE in MiB, and a bad one is named")
    func cacheSizeConfiguration() throws {
        #expect(try ServiceConfiguration(environment: [:]).cacheSize == nil)
        #expect(try ServiceConfiguration(environment: ["STRATA_SERVICE_CACHE_SIZE": "64"]).cacheSize == 64 << 20)
        for bad in ["0", "-1", "64MB", ""] {
            let error = #expect(throws: ServiceError.self) {
                try ServiceConfiguration(environment: ["STRATA_SERVICE_CACHE_SIZE": bad])
            }
            #expect(error?.message.contains("STRATA_SERVICE_CACHE_SIZE") == true)
        }
    }

    @Test("a Strata service working one request at a time answers concurrent requests on every route")
    func oneContextAtATime() async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(.strata, in: directory.url, contexts: 1)
        do {
            let sales = try await service.json(
                DepartmentRecord.self, "POST", "/departments", body: DepartmentInput(name: "Sales", budget: 1),
                status: 201)
            let imported = try await service.json(
                ImportResult.self, "POST", "/employees/import", body: (0..<20).map { Self.employee($0) }, status: 201)
            #expect(imported.inserted == 20)
            let created = try await withThrowingTaskGroup(of: EmployeeRecord.self) { group in
                for index in 20..<52 {
                    group.addTask {
                        try await service.json(
                            EmployeeRecord.self, "POST", "/employees", body: Self.employee(index, department: sales.id),
                            status: 201)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(created.map(\.id)).count == 32)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for record in created {
                    group.addTask {
                        #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(record.id)") == record)
                        let raised = try await service.json(
                            EmployeeRecord.self, "PATCH", "/employees/\(record.id)",
                            body: EmployeePatch(salary: record.salary + 1))
                        #expect(raised.salary == record.salary + 1)
                        let page = try await service.json(
                            [EmployeeRecord].self, "GET", "/employees?sort=-salary&limit=5")
                        #expect(page.count == 5)
                        #expect(try await service.send("DELETE", "/employees/\(record.id)").status == 204)
                    }
                }
                try await group.waitForAll()
            }
            let left = try await service.json([EmployeeRecord].self, "GET", "/employees?sort=name")
            #expect(left.count == 20)
            // The department, the import, and 32 creates, updates and deletes: 98 transactions.
            #expect(try await ChangeFeedTests.feed(service, "after=0&limit=98").count == 98)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("the context limit comes from STRATA_SERVICE_CONTEXTS, eight a core by default, and a bad one is named")
    func contextsConfiguration() throws {
        #expect(try ServiceConfiguration(environment: [:]).contexts == 8 * ProcessInfo.processInfo.activeProcessorCount)
        #expect(try ServiceConfiguration(environment: ["STRATA_SERVICE_CONTEXTS": "3"]).contexts == 3)
        for bad in ["0", "-1", "many", ""] {
            let error = #expect(throws: ServiceError.self) {
                try ServiceConfiguration(environment: ["STRATA_SERVICE_CONTEXTS": bad])
            }
            #expect(error?.message.contains("STRATA_SERVICE_CONTEXTS") == true)
        }
    }

    @Test("a bad predicate or sort key is a 400 with the parser's message", arguments: BackendKind.allCases)
    func badPredicate(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url)
        do {
            _ = try await service.json(EmployeeRecord.self, "POST", "/employees", body: Self.employee(1), status: 201)
            let malformed = try await service.send("GET", "/employees?where=\(Self.query("salary > AND"))")
            #expect(malformed.status == 400)
            let message = String(decoding: malformed.body, as: UTF8.self)
            #expect(message.contains("badRequest") && message.contains("salary > AND"), "\(message)")
            let unknownSort = try await service.send("GET", "/employees?sort=-shoeSize")
            #expect(unknownSort.status == 400)
            #expect(String(decoding: unknownSort.body, as: UTF8.self).contains("shoeSize"))
            // The service still answers, and the data is untouched.
            #expect(try await service.json([EmployeeRecord].self, "GET", "/employees").count == 1)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    /// `text` encoded for a query parameter as forms and `curl --data-urlencode` encode it: a
    /// space as `+`, and `+`, `&`, `=` and the rest percent-encoded.
    static func query(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~ ")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!.replacingOccurrences(of: " ", with: "+")
    }
}
