import BenchSupport
import Foundation
import StrataService
import Workloads

/// What a soak found.
struct SoakResult: Sendable {
    /// SIGKILLs sent under load.
    var kills = 0
    /// Employees whose `201` reached a writer.
    var acknowledged = 0
    /// Acknowledged employees missing after a restart, or with another name.
    var lost = 0
    /// Transactions the feed delivered.
    var delivered = 0
    /// Transactions the feed delivered twice (a token not after the last one), and inserts of
    /// one employee delivered twice.
    var duplicated = 0
    /// Employees in the store whose insert the feed never delivered.
    var missing = 0
    /// Inserts the feed delivered of employees the store does not hold.
    var phantom = 0
    /// Restarts after which the service did not listen.
    var unopenable = 0
    /// The soak's length in seconds.
    var seconds = 0.0
}

/// SIGKILLs of a service under write load: `connections` writers create employees with unique
/// names and log each acknowledgement, a consumer follows the change feed and resumes after
/// each restart with the last token it processed, and the server is killed at a random moment
/// and restarted on the same directory `kills` times (or until `seconds` have passed).
///
/// After each restart every employee acknowledged since the last check must read back with its
/// name; at the end the whole store is listed, and the feed must have delivered each
/// transaction once and the insert of every employee the store holds, and of no other.
struct SoakRun: Sendable {
    /// The SIGKILLs to send.
    let kills: Int
    /// The soak's longest run.
    let seconds: Double
    /// Concurrent writers.
    let connections: Int
    /// The seed of the moments of the kills.
    let seed: UInt64

    /// The shortest and longest time the server runs under load before a kill, in seconds.
    static let lifetimes: ClosedRange<Double> = 0.2...2.0
    /// How long the feed may take to catch up after the last restart.
    static let drainTimeout: Double = 30

    /// What the writers, the consumer and the killer share.
    private struct Shared {
        /// Acknowledged employees, in the order their answers came.
        var acknowledged: [(id: Int64, name: String)] = []
        /// The last token the consumer processed.
        var lastToken: Int64 = 0
        /// The employees whose insert the feed delivered.
        var inserted: Set<Int64> = []
        var delivered = 0
        var duplicated = 0
        /// Whether the writers and the consumer should stop.
        var stopping = false
    }

    /// Runs the soak on `server`, which must not be started and whose directory must be empty.
    ///
    /// - Throws: ``LoadError`` when the first start fails.
    func run(server: ServerProcess) async throws -> SoakResult {
        try server.start()
        let shared = SharedState(Shared())
        let client = ServiceClient(baseURL: server.baseURL, connections: connections)
        let feedClient = ServiceClient(baseURL: server.baseURL, connections: 1, readTimeout: nil)
        let started = monotonicNanoseconds()
        let writers = Task { await Self.write(client: client, connections: connections, shared: shared) }
        let consumer = Task { await Self.consume(feedClient, shared: shared) }

        var result = SoakResult()
        var random = SplitMix64(seed: seed)
        var checked = 0
        let deadline = started + UInt64(seconds * 1e9)
        while result.kills < kills, monotonicNanoseconds() < deadline {
            let lifetime = Self.lifetimes.lowerBound
                + random.unit() * (Self.lifetimes.upperBound - Self.lifetimes.lowerBound)
            try? await Task.sleep(for: .milliseconds(Int(lifetime * 1000)))
            server.kill()
            result.kills += 1
            do {
                try server.start()
            } catch {
                BenchCommand.progress("strata-service-load", "after kill \(result.kills): \(error)")
                result.unopenable += 1
                break
            }
            let acknowledged = shared.withLock { Array($0.acknowledged[checked...]) }
            result.lost += await Self.missing(acknowledged, client: client)
            checked += acknowledged.count
            if result.kills % 10 == 0 {
                BenchCommand.progress(
                    "strata-service-load", "\(result.kills) kills, \(checked) acknowledged writes checked")
            }
        }
        shared.withLock { $0.stopping = true }
        await writers.value
        if result.unopenable == 0 {
            let stored = try await Self.listEmployees(client: client)
            let acknowledged = shared.withLock { $0.acknowledged }
            result.lost += acknowledged[checked...].filter { stored[$0.id] != $0.name }.count
            let drainDeadline = Date().addingTimeInterval(Self.drainTimeout)
            while shared.withLock({ !$0.inserted.isSuperset(of: stored.keys) }), Date() < drainDeadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let inserted = shared.withLock { $0.inserted }
            result.missing = stored.keys.filter { !inserted.contains($0) }.count
            result.phantom = inserted.filter { stored[$0] == nil }.count
            result.acknowledged = acknowledged.count
        }
        // Closing the feed's connection ends the stream the consumer reads.
        consumer.cancel()
        await feedClient.shutdown()
        await consumer.value
        shared.withLock {
            result.delivered = $0.delivered
            result.duplicated = $0.duplicated
        }
        result.seconds = Double(monotonicNanoseconds() - started) / 1e9
        await client.shutdown()
        server.stop()
        return result
    }

    /// The writers: each creates employees named `soak <writer>-<n>` until the soak stops,
    /// logging each acknowledgement; a failed request (the server is down) is retried shortly.
    private static func write(client: ServiceClient, connections: Int, shared: SharedState<Shared>) async {
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<connections {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(writer))
                    var next = 0
                    while !shared.withLock({ $0.stopping }) {
                        let name = "soak \(writer)-\(next)"
                        let input = EmployeeInput(
                            name: name, salary: random.int64(in: ServiceDataset.salaries),
                            hired: Date(timeIntervalSince1970: 1_700_000_000), active: true, notes: "soak")
                        let answer = try? await client.send(.POST, "/employees", input)
                        if let answer, let record = try? ServiceClient.decode(EmployeeRecord.self, from: answer) {
                            shared.withLock { $0.acknowledged.append((record.id, name)) }
                            next += 1
                        } else {
                            try? await Task.sleep(for: .milliseconds(10))
                        }
                    }
                }
            }
        }
    }

    /// The consumer: follows the feed from after the last token it processed, reconnecting
    /// after each drop, until cancelled; counts what it receives twice.
    private static func consume(_ client: ServiceClient, shared: SharedState<Shared>) async {
        while !Task.isCancelled {
            let token = shared.withLock { $0.lastToken }
            try? await FeedReader.follow(client, after: token) { transaction in
                shared.withLock { shared in
                    shared.delivered += 1
                    guard transaction.token > shared.lastToken else {
                        shared.duplicated += 1
                        return
                    }
                    shared.lastToken = transaction.token
                    for change in transaction.changes where change.entity == "Employee" && change.type == "insert" {
                        if !shared.inserted.insert(change.id).inserted { shared.duplicated += 1 }
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// How many of `employees` do not read back with their name.
    private static func missing(_ employees: [(id: Int64, name: String)], client: ServiceClient) async -> Int {
        let batches = stride(from: 0, to: employees.count, by: 64).map { employees[$0..<min($0 + 64, employees.count)] }
        var missing = 0
        for batch in batches {
            missing += await withTaskGroup(of: Int.self) { group in
                for employee in batch {
                    group.addTask {
                        let answer = try? await client.send(.GET, "/employees/\(employee.id)")
                        let record = answer.flatMap { try? ServiceClient.decode(EmployeeRecord.self, from: $0) }
                        return record?.name == employee.name ? 0 : 1
                    }
                }
                return await group.reduce(0, +)
            }
        }
        return missing
    }

    /// Every employee in the store, by ID, with its name: pages of 1,000 ordered by name, each
    /// asking for the names after the last of the page before (the soak's names are unique), so
    /// that no page sorts again the rows earlier pages returned, as paging by offset does.
    private static func listEmployees(client: ServiceClient) async throws -> [Int64: String] {
        var employees: [Int64: String] = [:]
        var after: String?
        while true {
            var path = "/employees?sort=name&limit=1000"
            if let after {
                let predicate = "name > \"\(after)\""
                path += "&where=" + (predicate.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            }
            let page = try ServiceClient.decode([EmployeeRecord].self, from: try await client.send(.GET, path))
            for employee in page { employees[employee.id] = employee.name }
            guard page.count == 1000, let last = page.last else { return employees }
            after = last.name
        }
    }
}
