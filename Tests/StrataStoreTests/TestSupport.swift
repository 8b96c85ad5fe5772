import Foundation
@testable import StrataStore

/// A temporary directory removed when the value is released.
final class TemporaryDirectory: Sendable {
    /// The directory's path.
    let path: String

    /// Creates a fresh directory under the system's temporary directory.
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("strata-test-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The URL of a store named `name` inside the directory.
    func store(_ name: String = "Test") -> URL { URL(fileURLWithPath: path + "/\(name).strata") }
}

/// The schema most tests use: Department and Employee, as in the reference workloads.
enum TestSchema {
    static let department = 0
    static let employee = 1

    static let schema = try! Schema(entities: [
        EntitySchema(id: 0, name: "Department", columns: [
            ColumnSchema(name: "name", type: .string, isNullable: false, isIndexed: true),
            ColumnSchema(name: "budget", type: .double, isNullable: false),
        ]),
        EntitySchema(id: 1, name: "Employee", columns: [
            ColumnSchema(name: "name", type: .string, isNullable: false, keepsTombstone: true),
            ColumnSchema(name: "salary", type: .int64, isNullable: false, isIndexed: true),
            ColumnSchema(name: "notes", type: .string),
            ColumnSchema(name: "department", type: .reference(entity: 0)),
        ]),
    ])

    static func employee(_ index: Int, department: Int64? = nil) -> Row {
        Row([
            .string("Employee \(index)"), .int(Int64(30_000 + index * 7 % 170_000)),
            .string("notes for employee \(index), compressible text compressible text"),
            department.map { .reference($0) } ?? .null,
        ])
    }

    static func configuration(durability: Durability = .relaxed) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = durability
        configuration.backgroundMaintenance = false
        return configuration
    }
}
