import Foundation
import StrataService
import StrataTestSupport
import Testing

/// The change feed end to end: the live tail, resuming with a token, named consumers whose
/// cursors the store keeps across a restart, and graceful shutdown finishing a save in flight.
@Suite("Service change feed")
struct ChangeFeedTests {
    /// The events of a server-sent events body, decoded, with the `id:` of each.
    static func events(_ body: Data) throws -> [(id: Int64, transaction: FeedTransaction)] {
        try String(decoding: body, as: UTF8.self).components(separatedBy: "\n\n").filter { !$0.isEmpty }.map {
            event in
            let lines = event.split(separator: "\n")
            guard let id = lines.first(where: { $0.hasPrefix("id: ") }).flatMap({ Int64($0.dropFirst(4)) }),
                let data = lines.first(where: { $0.hasPrefix("data: ") })?.dropFirst(6)
            else { throw ServiceTestError("not an event: \(event)") }
            return (id, try RunningService.decoder.decode(FeedTransaction.self, from: Data(data.utf8)))
        }
    }

    /// The feed's events for `query` (which must end the response with `limit`).
    static func feed(_ service: RunningService, _ query: String, headers: [String: String] = [:]) async throws
        -> [(id: Int64, transaction: FeedTransaction)]
    {
        let (status, body) = try await service.send("GET", "/feed?\(query)", headers: headers)
        guard status == 200 else { throw ServiceTestError("GET /feed?\(query): \(status)") }
        return try events(body)
    }

    @Test("the live tail delivers each commit once, in order, resumable with its token", arguments: BackendKind.allCases)
    func liveTailAndResumption(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        var observed: ObservedBackend?
        let service = try await RunningService.start(kind, in: directory.url) { base in
            let backend = ObservedBackend(base)
            observed = backend
            return backend
        }
        let backend = try #require(observed)
        do {
            let sales = try await service.json(
                DepartmentRecord.self, "POST", "/departments", body: DepartmentInput(name: "Sales", budget: 1),
                status: 201)
            let first = try await Self.feed(service, "after=0&limit=1")
            #expect(first.map(\.transaction.changes) == [[.init(entity: "Department", id: sales.id, type: "insert")]])
            let start = try #require(first.first?.id)
            #expect(first.first?.transaction.token == start)

            // A tail opened after the department's transaction sees only what commits next.
            async let tail = Self.feed(service, "after=\(start)&limit=2")
            _ = await backend.tailsStarted.next()
            let ada = try await service.json(
                EmployeeRecord.self, "POST", "/employees", body: ServiceRouteTests.employee(1, department: sales.id),
                status: 201)
            _ = try await service.json(
                EmployeeRecord.self, "PATCH", "/employees/\(ada.id)", body: EmployeePatch(salary: 1))
            let live = try await tail
            // Strata's history also records the department whose to-many relationship the insert
            // changed, as Core Data's does; the SQL change table records the employee row only.
            #expect(
                live.map(\.transaction.employeeChanges) == [
                    [.init(entity: "Employee", id: ada.id, type: "insert")],
                    [.init(entity: "Employee", id: ada.id, type: "update")],
                ])
            #expect(live.map(\.id) == live.map(\.transaction.token) && live[0].id > start && live[1].id > live[0].id)

            // A client that reconnects with the last id it saw (Last-Event-ID) gets what came after.
            #expect(try await service.send("DELETE", "/employees/\(ada.id)").status == 204)
            let resumed = try await Self.feed(service, "limit=1", headers: ["Last-Event-ID": "\(live[1].id)"])
            #expect(resumed.map(\.transaction.employeeChanges) == [[.init(entity: "Employee", id: ada.id, type: "delete")]])
            // From the first token again: the same transactions, once each, in order.
            let replay = try await Self.feed(service, "after=\(start)&limit=3")
            #expect(replay.map(\.id) == live.map(\.id) + resumed.map(\.id))
            #expect(try await service.send("GET", "/feed?after=soon").status == 400)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("a named consumer resumes at the cursor the store keeps, across a restart", arguments: BackendKind.allCases)
    func namedConsumer(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        var service = try await RunningService.start(kind, in: directory.url)
        var created: [EmployeeRecord] = []
        do {
            for index in 0..<4 {
                created.append(
                    try await service.json(
                        EmployeeRecord.self, "POST", "/employees", body: ServiceRouteTests.employee(index),
                        status: 201))
            }
            let firstTwo = try await Self.feed(service, "consumer=indexer&limit=2")
            #expect(firstTwo.map { $0.transaction.changes.map(\.id) } == [[created[0].id], [created[1].id]])
            let third = try await Self.feed(service, "consumer=indexer&limit=1")
            #expect(third.map { $0.transaction.changes.map(\.id) } == [[created[2].id]])
            // Another consumer has its own cursor.
            let other = try await Self.feed(service, "consumer=auditor&limit=1")
            #expect(other.map { $0.transaction.changes.map(\.id) } == [[created[0].id]])
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
        service = try await RunningService.start(kind, in: directory.url)
        do {
            let fourth = try await Self.feed(service, "consumer=indexer&limit=1")
            #expect(fourth.map { $0.transaction.changes.map(\.id) } == [[created[3].id]])
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test(
        "deleting expired history keeps what a named consumer has not read; an older token gets 410",
        arguments: BackendKind.allCases)
    func expiredHistory(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url)
        do {
            func create(_ index: Int) async throws -> EmployeeRecord {
                try await service.json(
                    EmployeeRecord.self, "POST", "/employees", body: ServiceRouteTests.employee(index), status: 201)
            }
            _ = try await create(0)
            let first = try await Self.feed(service, "consumer=indexer&limit=1")
            let held = try #require(first.first?.id)
            var created: [EmployeeRecord] = []
            for index in 1...3 { created.append(try await create(index)) }
            let current = try await service.backend.currentToken()

            // The consumer holds everything after its cursor.
            try await service.backend.deleteHistory(before: Date())
            #expect(try await service.backend.oldestToken() == held)
            #expect(try await service.send("GET", "/feed?after=\(held - 1)").status == 410)
            let expired = try await service.send("GET", "/feed?limit=1", headers: ["Last-Event-ID": "0"])
            #expect(expired.status == 410)
            #expect(String(decoding: expired.body, as: UTF8.self).contains("tokenExpired"))
            let kept = try await Self.feed(service, "consumer=indexer&limit=3")
            #expect(kept.map { $0.transaction.changes.map(\.id) } == created.map { [$0.id] })

            // Once it has read them, they go too (SQL keeps the newest row, whose ID is the token).
            try await service.backend.deleteHistory(before: Date())
            let oldest = try await service.backend.oldestToken()
            #expect(oldest > held && oldest <= current)
            #expect(try await service.backend.currentToken() == current)
            #expect(try await service.send("GET", "/feed?after=\(held)").status == 410)
            let next = try await create(4)
            let live = try await Self.feed(service, "after=\(current)&limit=1")
            #expect(live.map { $0.transaction.changes.map(\.id) } == [[next.id]])
            // A consumer registered now starts at the oldest history kept.
            let late = try await Self.feed(service, "consumer=late&limit=1")
            #expect(late.first.map { $0.id > oldest } == true)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("the service deletes history older than its retention as it runs", arguments: BackendKind.allCases)
    func retentionRuns(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        let service = try await RunningService.start(kind, in: directory.url, historyRetention: .seconds(1))
        do {
            for index in 0..<2 {
                _ = try await service.json(
                    EmployeeRecord.self, "POST", "/employees", body: ServiceRouteTests.employee(index), status: 201)
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while try await service.backend.oldestToken() == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await service.backend.oldestToken() > 0)
            #expect(try await service.send("GET", "/feed?after=0").status == 410)
        } catch {
            try await service.stop()
            throw error
        }
        try await service.stop()
    }

    @Test("graceful shutdown finishes a save in flight before the store closes", arguments: BackendKind.allCases)
    func gracefulShutdownFinishesSave(_ kind: BackendKind) async throws {
        let directory = TemporaryDirectory()
        var observed: ObservedBackend?
        let service = try await RunningService.start(kind, in: directory.url) { base in
            let backend = ObservedBackend(base, holdsInserts: true)
            observed = backend
            return backend
        }
        let backend = try #require(observed)
        async let insert = service.send("POST", "/employees", body: ServiceRouteTests.employee(7))
        _ = await backend.insertsHeld.next()
        async let stopped: Void = service.stop()
        // The shutdown has begun (the server takes no new connection) while the save waits.
        try await Task.sleep(for: .milliseconds(100))
        backend.release()
        let (status, body) = try await insert
        try await stopped
        #expect(status == 201, "\(String(decoding: body, as: UTF8.self))")
        let saved = try RunningService.decoder.decode(EmployeeRecord.self, from: body)

        let reopened = try await RunningService.start(kind, in: directory.url)
        do {
            #expect(try await reopened.json(EmployeeRecord.self, "GET", "/employees/\(saved.id)") == saved)
        } catch {
            try await reopened.stop()
            throw error
        }
        try await reopened.stop()
    }
}

extension FeedTransaction {
    /// The changes to employees.
    var employeeChanges: [Change] { changes.filter { $0.entity == "Employee" } }
}
