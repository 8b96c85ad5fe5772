import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `strata replay` and `Store.replayHistory(from:)`: a store's history applied to another store
/// of the same model, with the same object keys, resumable and idempotent.
@Suite struct HistoryReplayTests {
    typealias History = PersistentHistoryTests

    /// The employees of the store at `url`, by primary key: name and salary.
    static func employees(at url: URL) throws -> [Int64: String] {
        let container = try History.container(at: url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var result: [Int64: String] = [:]
            for employee in try context.fetch(Employee.fetchRequest()) {
                result[employee.objectID.primaryKey] = "\(employee.name) \(employee.salary)"
            }
            return result
        }
    }

    @Test func replayCopiesTheHistoryOnceAndResumes() throws {
        let folder = TemporaryDirectory()
        let source = folder.store("Source")
        let destination = folder.store("Destination")
        do {
            let container = try History.container(at: source)
            let ids = try History.insert(["Ada", "Grace", "Linus"], author: "import", in: container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
                ada.salary = 70_000
                context.delete(try context.existingObject(with: ids[1]))
                try context.save()
            }
            try container.close()
        }
        let first = try ExplainCLITests.strata(["replay", source.path, destination.path], in: folder)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output == "replayed 2 transactions\n")
        #expect(try Self.employees(at: destination) == Self.employees(at: source))
        #expect(try Self.employees(at: destination).values.sorted() == ["Ada 70000", "Linus 50000"])

        let again = try ExplainCLITests.strata(["replay", source.path, destination.path], in: folder)
        #expect(again.output == "replayed 0 transactions\n", "\(again.errors)")

        let more = try History.container(at: source)
        try History.insert(["Barbara"], author: "later", in: more)
        try more.close()
        let resumed = try ExplainCLITests.strata(["replay", source.path, destination.path], in: folder)
        #expect(resumed.output == "replayed 1 transaction\n", "\(resumed.errors)")
        #expect(try Self.employees(at: destination) == Self.employees(at: source))

        let container = try History.container(at: destination)
        defer { try? container.close() }
        let replayed = try History.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(replayed.map(\.author) == ["import", nil, "later"])
        #expect(replayed.last?.changes?.first?.newValues?["name"] as? String == "Barbara")
    }
}
