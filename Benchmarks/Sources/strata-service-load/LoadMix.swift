import Foundation
import StrataService
import Workloads

/// A mix of reads and writes, as `95-5` (95% reads, 5% writes) names it.
///
/// A read is a `GET /employees/{id}` of a random seeded employee, or one time in ten a page of
/// 20 employees above a random salary, highest first (the W5 query as a list route). A write
/// is a `POST /employees` of a new employee in a random department, or half the time a `PATCH`
/// of a random seeded employee's salary. Every write is one durable save. A run that keeps the
/// data set's size (``nextRequest(in:random:created:)`` with the IDs a worker created) deletes
/// the oldest employee the worker created in place of every other create.
struct LoadMix: Hashable, Sendable, CustomStringConvertible {
    /// The share of reads, in percent.
    let readPercent: Int

    /// The mixes `make service-bench` runs.
    static let reference = [LoadMix(readPercent: 95), LoadMix(readPercent: 50), LoadMix(readPercent: 0)]

    /// A mix of `readPercent` reads.
    init(readPercent: Int) {
        self.readPercent = readPercent
    }

    /// The mix `text` names (`95-5`, `50-50`, `0-100`).
    ///
    /// - Throws: ``LoadError`` when it is not two percentages adding up to 100.
    init(parsing text: String) throws {
        let parts = text.split(separator: "-").map { Int($0) }
        guard parts.count == 2, let reads = parts[0], let writes = parts[1], reads >= 0, writes >= 0,
            reads + writes == 100
        else { throw LoadError("the mix \(text) is not reads-writes in percent, as 95-5") }
        readPercent = reads
    }

    /// `95-5`.
    var description: String { "\(readPercent)-\(100 - readPercent)" }

    /// One request of the mix over a data set of `dataset`.
    struct Request: Sendable {
        /// Whether it writes.
        var isWrite: Bool
        /// Whether it creates an employee, whose record its answer holds.
        var creates = false
        /// Sends it with `client`.
        var send: @Sendable (ServiceClient) async throws -> ServiceClient.Answer
    }

    /// The employees a worker of a run keeping the data set's size holds created before it
    /// deletes the oldest instead of creating another.
    static let createdBacklog = 8

    /// The next request, drawn with `random`. With `created` (the IDs of the employees the
    /// worker created and did not delete, oldest first), a create drawn while it holds
    /// ``createdBacklog`` IDs deletes the oldest instead, so that creates and deletes balance.
    func nextRequest(in dataset: ServiceDataset, random: inout SplitMix64, created: inout [Int64]?) -> Request {
        let id = dataset.randomEmployee(&random)
        if Int(random.below(100)) < readPercent {
            if random.below(10) == 0 {
                let salary = random.int64(in: ServiceDataset.salaries)
                let path = "/employees?where=salary%20%3E%20\(salary)&sort=-salary&limit=20"
                return Request(isWrite: false) { try await $0.send(.GET, path) }
            }
            return Request(isWrite: false) { try await $0.send(.GET, "/employees/\(id)") }
        }
        if random.below(2) == 0 {
            let patch = EmployeePatch(salary: random.int64(in: ServiceDataset.salaries))
            return Request(isWrite: true) { try await $0.send(.PATCH, "/employees/\(id)", patch) }
        }
        let input = dataset.newEmployee(&random)
        if let backlog = created, backlog.count >= Self.createdBacklog {
            let oldest = created!.removeFirst()
            return Request(isWrite: true) { try await $0.send(.DELETE, "/employees/\(oldest)") }
        }
        return Request(isWrite: true, creates: true) { try await $0.send(.POST, "/employees", input) }
    }
}
