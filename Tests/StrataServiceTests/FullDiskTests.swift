import Foundation
import StrataService
import StrataTestSupport
import Testing

/// The service on a full disk: writes answer 507 with `insufficientStorage`, reads go on, and
/// once the disk has room writes go through again.
@Suite("Service on a full disk")
struct FullDiskTests {
    /// The disk: Strata's first window of preallocated log space (4 MiB) and 1 MiB.
    static let diskSize = 5 << 20
    /// Notes of about 32 KiB that no compression shrinks (each write's its own), so the disk
    /// fills in a few hundred writes.
    static func notes() -> String {
        (0..<900).map { _ in UUID().uuidString }.joined()
    }
    /// The most writes tried before the disk must have filled.
    static let attempts = 1_000

    @Test(
        "writes fail with 507 and reads keep working", .enabled(if: TmpfsMount.isAvailable, "mounting a tmpfs needs Linux and root"),
        arguments: BackendKind.allCases)
    func writesFailWith507(_ kind: BackendKind) async throws {
        let disk = try TmpfsMount(size: Self.diskSize)
        defer { disk.unmount() }
        let service = try await RunningService.start(kind, in: disk.url.appendingPathComponent("data"))
        do {
            var created: [EmployeeRecord] = []
            var refusal: (status: Int, body: Data)?
            for index in 0..<Self.attempts {
                let input = EmployeeInput(
                    name: "Employee \(index)", salary: 50_000, hired: ServiceRouteTests.hired, active: true,
                    notes: Self.notes())
                let answer = try await service.send("POST", "/employees", body: input)
                guard answer.status == 201 else {
                    refusal = answer
                    break
                }
                created.append(try RunningService.decoder.decode(EmployeeRecord.self, from: answer.body))
            }
            let (status, body) = try #require(refusal, "\(Self.attempts) writes of 32 KiB fit a 5 MiB disk")
            #expect(status == 507, "\(String(decoding: body, as: UTF8.self))")
            #expect(String(decoding: body, as: UTF8.self).contains("insufficientStorage"))
            #expect(created.count > 10, "the disk held some writes before it filled")

            for employee in created {
                #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(employee.id)") == employee)
            }
            let listed = try await service.json([EmployeeRecord].self, "GET", "/employees?limit=1000")
            #expect(listed.count == created.count, "the failed write left nothing behind")

            try disk.resize(to: 8 * Self.diskSize)
            let input = EmployeeInput(
                name: "After", salary: 1, hired: ServiceRouteTests.hired, active: true, notes: "room again")
            let after = try await service.json(EmployeeRecord.self, "POST", "/employees", body: input, status: 201)
            #expect(try await service.json(EmployeeRecord.self, "GET", "/employees/\(after.id)") == after)
        } catch {
            try? disk.resize(to: 8 * Self.diskSize)
            try await service.stop()
            throw error
        }
        try await service.stop()
    }
}
