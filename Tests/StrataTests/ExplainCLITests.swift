import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `strata explain`: the plan of a fetch on a store written with a model file.
@Suite struct ExplainCLITests {
    /// The Company model (Person <- Employee <- Manager, Department), with salary indexed.
    static let modelURL = Bundle.module.url(
        forResource: "Company", withExtension: "xcdatamodeld", subdirectory: "Models")!

    /// Runs `strata` with `arguments`; returns its exit status, output and errors.
    static func strata(
        _ arguments: [String], in folder: TemporaryDirectory
    ) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "strata")
        process.arguments = arguments
        let name = UUID().uuidString
        let outputURL = folder.url.appendingPathComponent("\(name).out")
        let errorsURL = folder.url.appendingPathComponent("\(name).err")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorsURL)
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        try output.close()
        try errors.close()
        return (
            process.terminationStatus, try String(contentsOf: outputURL, encoding: .utf8),
            try String(contentsOf: errorsURL, encoding: .utf8)
        )
    }

    @Test func explainPrintsThePlanOfAFetchAndACount() throws {
        let folder = TemporaryDirectory()
        let store = folder.store()
        do {
            let container = try GraphModel.container(
                at: store, model: try ManagedObjectModel(checkedContentsOf: Self.modelURL))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for index in 0..<20 {
                    let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                    employee.setValue("e\(index)", forKey: "name")
                    employee.setValue(Int64(30_000 + 8_000 * index), forKey: "salary")
                }
                try context.save()
            }
            try container.close()
        }
        let common = [
            store.path, "--model", Self.modelURL.path, "--entity", "Employee", "--predicate",
            "salary > 150000 AND active == YES",
        ]
        let fetch = try Self.strata(["explain"] + common + ["--sort", "salary:desc", "--limit", "100"], in: folder)
        #expect(fetch.status == 0, "\(fetch.errors)")
        #expect(fetch.output.hasPrefix("fetch Employee\n"))
        #expect(fetch.output.contains("walk index on salary descending within salary > 150000, stop after 100 matches"))
        #expect(fetch.output.contains("filter rows: "))
        #expect(!fetch.output.contains("entity tag"), "Employee and Manager rows match; Person is abstract")

        let count = try Self.strata(["explain"] + common + ["--count", "--json"], in: folder)
        #expect(count.status == 0, "\(count.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(count.output.utf8)) as? [String: Any])
        #expect(report["operation"] as? String == "count")
        #expect(report["access"] as? String == "index salary > 150000")
        #expect(report["usesIndex"] as? Bool == true)
        #expect(report["readsRows"] as? Bool == true)

        let scan = try Self.strata(
            [
                "explain", store.path, "--model", Self.modelURL.path, "--entity", "Department", "--predicate",
                "budget > 10",
            ], in: folder)
        #expect(scan.status == 0, "\(scan.errors)")
        #expect(
            scan.output
                == "fetch Department\n  scan every row\n  filter rows: \(try FetchPredicate(checkedFormat: "budget > 10", argumentArray: []).predicateFormat)\n"
        )

        let unknown = try Self.strata(
            ["explain", store.path, "--model", Self.modelURL.path, "--entity", "Nope"], in: folder)
        #expect(unknown.status == 1)
        #expect(unknown.errors.hasPrefix("strata: "))
        let malformed = try Self.strata(["explain"] + common.dropLast() + ["salary >"], in: folder)
        #expect(malformed.status == 1)
        #expect(malformed.errors.hasPrefix("strata: "))
        let missing = try Self.strata(
            [
                "explain", folder.url.appendingPathComponent("none.strata").path, "--model", Self.modelURL.path,
                "--entity", "Employee",
            ], in: folder)
        #expect(missing.status == 1)
        #expect(
            !FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("none.strata").path),
            "nothing is created")
    }
}
