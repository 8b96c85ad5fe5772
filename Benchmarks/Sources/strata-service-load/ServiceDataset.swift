import Foundation
import StrataService
import Workloads

/// The data a load run starts from: the reference data set of WORKLOADS.md (``Dataset``) of
/// `employeeCount` employees, imported through the service, and the employees its writes
/// create, drawn after them. `Sendable`.
struct ServiceDataset: Sendable {
    /// The employees imported before the run; their IDs are 1 through this.
    let employeeCount: Int
    /// The departments created before the run; their IDs are 1 through this.
    let departmentCount: Int
    /// The data set the service is seeded with.
    private let dataset: Dataset
    /// The employees writes create, each in a random department.
    private let newEmployees: [EmployeeInput]

    /// The salaries writes set and list queries start from.
    static let salaries: ClosedRange<Int64> = 30_000...200_000
    /// Employees per `POST /employees/import`.
    static let importBatch = 1_000

    /// The data set of `employeeCount` employees from `seed`.
    init(employeeCount: Int, seed: UInt64) {
        dataset = Dataset(employeeCount: employeeCount, seed: seed)
        self.employeeCount = employeeCount
        departmentCount = dataset.departments.count
        newEmployees = dataset.additionalEmployees(count: 4_096).map { Self.input($0, department: nil) }
    }

    /// `employee` as the API's input, in `department`.
    private static func input(_ employee: Employee, department: Int64?) -> EmployeeInput {
        EmployeeInput(
            name: employee.name, salary: employee.salary, hired: employee.hired, active: employee.active,
            notes: employee.notes, photo: employee.photo, department: department)
    }

    /// Creates the departments and imports the employees through `client`, into an empty
    /// service, and checks that they got the IDs the run asks for.
    ///
    /// - Throws: ``LoadError`` when a request fails or the IDs are not 1 through N.
    func seed(through client: ServiceClient) async throws {
        for (index, department) in dataset.departments.enumerated() {
            let created = try ServiceClient.decode(
                DepartmentRecord.self,
                from: try await client.send(
                    .POST, "/departments", DepartmentInput(name: department.name, budget: department.budget)))
            guard created.id == Dataset.departmentKey(index) else {
                throw LoadError("department \(index) got the ID \(created.id); is the service's store empty?")
            }
        }
        var start = 0
        while start < employeeCount {
            let batch = dataset.employees[start..<min(start + Self.importBatch, employeeCount)]
            let answer = try await client.send(.POST, "/employees/import", batch.map { Self.input($0, department: nil) })
            _ = try ServiceClient.decode(ImportResult.self, from: answer)
            start += batch.count
        }
        for id in [1, Int64(employeeCount)] {
            let answer = try await client.send(.GET, "/employees/\(id)")
            guard answer.succeeded else { throw LoadError("the imported employee \(id) is not there: HTTP \(answer.status)") }
        }
    }

    /// The ID of a random imported employee.
    func randomEmployee(_ random: inout SplitMix64) -> Int64 {
        Dataset.employeeKey(random.index(below: employeeCount))
    }

    /// A new employee in a random department.
    func newEmployee(_ random: inout SplitMix64) -> EmployeeInput {
        var input = newEmployees[random.index(below: newEmployees.count)]
        input.department = Dataset.departmentKey(random.index(below: departmentCount))
        return input
    }
}
