// swift-format-ignore-file
// (The README examples stand here line for line as the README prints them.)
import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// README.md's Swift examples, line for line (the README's `import` lines aside): the compiler
/// builds them here, ``ReadmeExampleTests`` checks that every line of each README block stands
/// here in the same order, and runs them on a store of their own.
enum ReadmeExamples {
    final class Employee: ManagedObject {
        @Managed var name: String
        @Managed var salary: Int64
    }

    /// The object-graph example, then the history example after it.
    static func objectGraphAndHistory(modelURL: URL, storeURL: URL) throws -> [String] {
        var printed: [String] = []
        func print(_ item: Any) { printed.append("\(item)") }
        func print(_ first: Any, _ second: Any) { printed.append("\(first) \(second)") }

        let container = PersistentContainer(name: "Company", managedObjectModel: ManagedObjectModel(contentsOf: modelURL)!)
        let description = PersistentStoreDescription(url: storeURL)  // a Company.strata directory
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)  // keep history, as below
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.salary = 120_000
            try context.save()                                   // one durable transaction

            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(format: "salary > %@ AND name BEGINSWITH[c] %@", 100_000, "a")
            request.sortDescriptors = [FetchSortDescriptor(keyPath: \Employee.salary, ascending: false)]
            request.fetchLimit = 10
            for employee in try context.fetch(request) { print(employee.name) }
            print(try context.explain(request))                 // which fetch index, filter, early stop

            // Foundation's #Predicate and SortDescriptor on typed subclasses plan the same way.
            let typed = try FetchRequest<Employee>(
                predicate: #Predicate<Employee> { $0.salary > 100_000 }, sortBy: [SortDescriptor(\.name)])
            print(try context.count(for: typed))
        }

        var lastToken: PersistentHistoryToken? = nil                 // Codable: persist it between runs
        try context.performAndWait {
            let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
            let result = try context.execute(request) as! PersistentHistoryResult
            for transaction in result.result as! [PersistentHistoryTransaction] {
                print(transaction.author ?? "-", transaction.changes?.count ?? 0)
                lastToken = transaction.token
            }
        }
        try container.close()
        return printed
    }

    /// The engine example.
    static func engine(engineURL: URL) throws -> [String] {
        var printed: [String] = []
        func print(_ item: Any) { printed.append("\(item)") }

        let schema = try Schema(entities: [
            EntitySchema(id: 0, name: "Employee", columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false),
                ColumnSchema(name: "salary", type: .int64, isNullable: false, isIndexed: true),
            ]),
        ])
        let store = try Store.open(at: engineURL, schema: schema)
        let key = store.allocateKeys(for: 0).lowerBound
        var transaction = Transaction(author: "importer")
        transaction.insert(0, key: key, row: Row([.string("Ada"), .int(120_000)]))
        let sequence = try store.commit(transaction)        // durable: returns after fdatasync
        let row = try store.read(0, key: key)                // one pread + one block decompression at most
        let rich = try store.keys(0, column: 1, matching: .range(lower: IndexBound(.int(100_000), inclusive: true), upper: nil))
        for change in try store.history(after: sequence - 1) { print(change) }
        try store.close()
        printed.append("\(row.map { "\($0)" } ?? "nil") \(rich.count)")
        return printed
    }
}

@Suite struct ReadmeExampleTests {
    /// The repository's README.
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// The lines of README.md's Swift blocks, one array a block, trimmed, without blank lines,
    /// comments-only lines and imports.
    static func readmeBlocks() throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in try String(contentsOf: readme, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```swift") {
                current = []
            } else if line.hasPrefix("```"), let block = current {
                blocks.append(block)
                current = nil
            } else if current != nil {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty, !trimmed.hasPrefix("import ") { current!.append(trimmed) }
            }
        }
        return blocks
    }

    @Test func everyReadmeBlockStandsHereLineForLine() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let blocks = try Self.readmeBlocks()
        #expect(blocks.count == 3, "the object-graph, history and engine examples")
        for block in blocks {
            var position = source.startIndex
            for line in block {
                guard let found = source[position...].firstIndex(of: line) else {
                    Issue.record("README line not in ReadmeExampleTests.swift (or out of order): \(line)")
                    break
                }
                position = found + 1
            }
        }
    }

    @Test func theExamplesRunAsPrinted() throws {
        let folder = TemporaryDirectory()
        let modelURL = folder.url.appendingPathComponent("Company.xcdatamodel")
        try FileManager.default.createDirectory(at: modelURL, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Employee" representedClassName="StrataTests.ReadmeExamples.Employee" syncable="YES">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="salary" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    <fetchIndex name="bySalary">
                        <fetchIndexElement property="salary" type="Binary" order="ascending"/>
                    </fetchIndex>
                </entity>
            </model>
            """.write(to: modelURL.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let printed = try ReadmeExamples.objectGraphAndHistory(modelURL: modelURL, storeURL: folder.store())
        #expect(printed.first == "Ada")
        #expect(printed.contains("1"), "the #Predicate count")
        #expect(printed.last == "- 1", "one transaction, with one change")
        let engine = try ReadmeExamples.engine(engineURL: folder.store("Engine"))
        #expect(engine.last?.hasSuffix(" 1") == true, "the row read and the one key above 100,000")
    }
}
