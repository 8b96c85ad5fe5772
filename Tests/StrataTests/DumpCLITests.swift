import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `strata dump`: a store's history and live objects as JSON lines of the object graph, with
/// entity names, object URIs, property names, and old and new values.
@Suite struct DumpCLITests {
    @Test func dumpWritesObjectsAndHistoryWithOldAndNewValues() throws {
        let folder = TemporaryDirectory()
        let store = folder.store()
        let model = try ManagedObjectModel(checkedContentsOf: ExplainCLITests.modelURL)
        do {
            let container = try PersistentHistoryTests.container(at: store, model: model)
            let context = container.newBackgroundContext()
            context.transactionAuthor = "hr"
            try context.performAndWait {
                let ada = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                ada.setValue("Ada", forKey: "name")
                ada.setValue(Int64(50_000), forKey: "salary")
                let grace = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                grace.setValue("Grace", forKey: "name")
                try context.save()
                ada.setValue(Int64(60_000), forKey: "salary")
                try context.save()
                context.delete(ada)
                try context.save()
            }
            try container.close()
        }
        let common = [store.path, "--model", ExplainCLITests.modelURL.path]
        let dump = try ExplainCLITests.strata(["dump"] + common + ["--snapshot"], in: folder)
        #expect(dump.status == 0, "\(dump.errors)")
        let lines = try dump.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let objects = lines.filter { $0["kind"] as? String == "object" }
        #expect(objects.count == 1)
        #expect(objects.first?["entity"] as? String == "Employee")
        #expect((objects.first?["values"] as? [String: Any])?["name"] as? String == "Grace")
        #expect((objects.first?["uri"] as? String)?.hasPrefix("x-coredata://") == true)

        let transactions = lines.filter { $0["kind"] as? String == "transaction" }
        #expect(transactions.map { $0["transactionNumber"] as? Int } == [1, 2, 3])
        #expect(transactions.allSatisfy { $0["author"] as? String == "hr" })
        let changes = transactions.map { $0["changes"] as? [[String: Any]] ?? [] }
        let insert = try #require(changes[0].first { ($0["new"] as? [String: Any])?["name"] as? String == "Ada" })
        #expect(insert["changeType"] as? String == "insert" && insert["entity"] as? String == "Employee")
        let update = try #require(changes[1].first)
        #expect(update["changeType"] as? String == "update")
        #expect(update["updatedProperties"] as? [String] == ["salary"])
        #expect((update["old"] as? [String: Any])?["salary"] as? Int == 50_000)
        #expect((update["new"] as? [String: Any])?["salary"] as? Int == 60_000)
        #expect(update["uri"] as? String == insert["uri"] as? String)
        let delete = try #require(changes[2].first)
        #expect(delete["changeType"] as? String == "delete")
        #expect((delete["old"] as? [String: Any])?["name"] as? String == "Ada")
        #expect((delete["old"] as? [String: Any])?["salary"] as? Int == 60_000)

        let later = try ExplainCLITests.strata(["dump"] + common + ["--after", "1"], in: folder)
        #expect(later.status == 0, "\(later.errors)")
        #expect(later.output.split(separator: "\n").count == 2)
        let history = try ExplainCLITests.strata(["history"] + common + ["--after", "1", "--limit", "1"], in: folder)
        #expect(history.status == 0, "\(history.errors)")
        let graph = try history.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(graph.map { $0["transactionNumber"] as? Int } == [2], "strata history --model speaks the object graph")
        #expect((graph.first?["changes"] as? [[String: Any]])?.first?["updatedProperties"] as? [String] == ["salary"])
        let refused = try ExplainCLITests.strata(["dump"] + common + ["--format", "csv"], in: folder)
        #expect(refused.status != 0)
        #expect(refused.output.isEmpty)
    }
}
