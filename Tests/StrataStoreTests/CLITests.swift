import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Runs the built `strata` executable on stores made by the tests.
@Suite struct CLITests {
    /// What one run of `strata` printed and how it exited.
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `strata` with `arguments`, its output captured in files of `directory`.
    static func strata(_ arguments: String..., in directory: TemporaryDirectory) throws -> Run {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "strata")
        process.arguments = arguments
        let name = UUID().uuidString
        let outputURL = URL(fileURLWithPath: directory.path + "/\(name).out")
        let errorsURL = URL(fileURLWithPath: directory.path + "/\(name).err")
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
        return Run(
            status: process.terminationStatus, output: try String(contentsOf: outputURL, encoding: .utf8),
            errors: try String(contentsOf: errorsURL, encoding: .utf8))
    }

    /// Opens a new store and commits one department and `employees` employees in `transactions` commits.
    static func makeStore(_ url: URL, employees: Int = 30, transactions: Int = 3) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var first = Transaction(author: "cli-tests", contextName: "setup")
        first.insert(
            TestSchema.department, key: store.allocateKeys(for: TestSchema.department).lowerBound,
            row: Row([.string("R&D"), .double(1e6)]))
        try store.commit(first)
        for _ in 0..<transactions {
            var transaction = Transaction(author: "cli-tests")
            for key in store.allocateKeys(for: TestSchema.employee, count: employees / transactions) {
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key), department: 1))
            }
            try store.commit(transaction)
        }
        return store
    }

    /// The total size of the store's segment files.
    static func segmentBytes(_ url: URL) throws -> Int {
        let directory = url.path + "/segments"
        return try FileManager.default.contentsOfDirectory(atPath: directory).reduce(0) { total, name in
            total + (try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int ?? 0)
        }
    }

    @Test func infoPrintsTextAndJSONWhileTheStoreIsOpen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.makeStore(url)

        let text = try Self.strata("info", url.path, in: directory)
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("Employee (id 1): 30 rows"))
        #expect(text.output.contains("Department (id 0): 1 row"))
        #expect(text.output.contains(store.storeID.uuidString))
        #expect(text.output.contains("segments/00000001.log  active"))
        #expect(text.output.contains("with every page read"))
        #expect(text.output.contains("bytes per live object"))

        let json = try Self.strata("info", url.path, "--json", in: directory)
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Department", "Employee"])
        #expect(entities.map { $0["rows"] as? Int } == [1, 30])
        #expect(object["formatVersion"] as? Int == Int(Store.formatVersion))
        #expect(object["lastSequence"] as? Int == 4)
        #expect((object["segments"] as? [[String: Any]])?.count == 1)
        #expect(object.keys.contains("checkpoint"))
        // One page of 4,096 keys an entity, each read only when used.
        let whenRead = try #require(object["indexMemoryBytesWhenRead"] as? Int)
        #expect(whenRead >= 2 * IndexPage.byteCount)
        #expect(try #require(object["indexMemoryBytes"] as? Int) <= whenRead)
        // A salary and a department entry for each of the 30 employees (16 bytes each, packed), a
        // name for the department (32).
        let packed = MemoryLayout<PackedIndexEntry<IntIndexKind>>.stride
        #expect(try #require(object["fetchIndexMemoryBytes"] as? Int) >= 60 * packed + MemoryLayout<GeneralIndexEntry>.stride)
        try store.close()
    }

    @Test func verifyExitsZeroOnASoundStoreAndNonZeroNamingTheDamagedFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.makeStore(url).close()

        let sound = try Self.strata("verify", url.path, in: directory)
        #expect(sound.status == 0, "\(sound.output)\(sound.errors)")
        #expect(sound.output.contains("No problems found."))
        #expect(sound.errors.isEmpty)

        let segment = url.path + "/segments/00000001.log"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[SegmentFile.headerSize + 40] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: segment))
        let damaged = try Self.strata("verify", url.path, in: directory)
        #expect(damaged.status != 0)
        #expect(damaged.output.contains("00000001.log offset"))

        let json = try Self.strata("verify", url.path, "--json", in: directory)
        #expect(json.status != 0)
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(json.output.utf8))
        #expect(report.problems.first?.file == segment)
    }

    @Test func compactReducesTheBytesAfterDeletes() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.makeStore(url, employees: 300)
        var deletes = Transaction()
        for key in Int64(1)...250 { deletes.delete(TestSchema.employee, key: key) }
        try store.commit(deletes)
        try store.deleteHistory(before: store.lastSequence + 1)
        try store.close()
        let before = try Self.segmentBytes(url)

        let run = try Self.strata("compact", url.path, in: directory)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("segment rewritten") || run.output.contains("segments rewritten"))
        #expect(try Self.segmentBytes(url) < before)

        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(reopened.count(TestSchema.employee) == 50)
        #expect(try reopened.read(TestSchema.employee, key: 300) == TestSchema.employee(300, department: 1))
        try reopened.close()
    }

    @Test func compactRefusesALockedStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.makeStore(url)
        let run = try Self.strata("compact", url.path, in: directory)
        #expect(run.status != 0)
        #expect(run.errors.hasPrefix("strata: another process has the store open for writing"))
        #expect(store.count(TestSchema.employee) == 30)
        try store.close()
    }

    @Test func historyJSONListsTheCommittedSequences() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.makeStore(url)
        var change = Transaction(author: "editor", contextName: "ui")
        change.update(TestSchema.employee, key: 1, row: TestSchema.employee(100), changedColumns: [0])
        change.delete(TestSchema.employee, key: 2)
        try store.commit(change)
        try store.close()

        let all = try Self.strata("history", url.path, "--json", in: directory)
        #expect(all.status == 0, "\(all.errors)")
        let lines = all.output.split(separator: "\n")
        let transactions = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(transactions.map { $0["sequence"] as? Int } == [1, 2, 3, 4, 5])
        #expect(transactions[0]["author"] as? String == "cli-tests")
        let last = try #require(transactions.last?["changes"] as? [[String: Any]])
        #expect(last.map { $0["kind"] as? String } == ["update", "delete"])
        #expect(last[0]["changedColumns"] as? [String] == ["name"])
        #expect((last[0]["row"] as? [String: Any])?["name"] as? String == "Employee 100")
        #expect((last[1]["tombstone"] as? [String: Any])?["name"] as? String == "Employee 2")

        let page = try Self.strata("history", url.path, "--after", "1", "--limit", "2", "--json", in: directory)
        let pageSequences = try page.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["sequence"] as? Int
        }
        #expect(pageSequences == [2, 3])

        let text = try Self.strata("history", url.path, "--after", "4", in: directory)
        #expect(text.status == 0)
        #expect(text.output.hasPrefix("#5  "))
        #expect(text.output.contains("author: editor  context: ui"))
        #expect(text.output.contains("update Employee 1 [name]: name=\"Employee 100\""))
        #expect(text.output.contains("delete Employee 2; tombstone: name=\"Employee 2\""))
    }

    @Test(arguments: ["info", "verify", "compact", "history"])
    func nonStoreDirectoryFailsWithAMessage(_ subcommand: String) throws {
        let directory = TemporaryDirectory()
        let plain = directory.path + "/plain"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: false)
        let run = try Self.strata(subcommand, plain, in: directory)
        #expect(run.status != 0)
        #expect(run.errors.hasPrefix("strata: the directory is not a Strata store"))
        #expect(!run.errors.contains("Fatal error"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: plain) == [])

        let missing = try Self.strata(subcommand, directory.path + "/missing", in: directory)
        #expect(missing.status != 0)
        #expect(missing.errors.hasPrefix("strata: no store at this path"))
    }
}
