// The quickstart `make demo` runs: create a store, save, reopen, read, show history, compact.
import Foundation
import StrataStore

/// Where the quickstart keeps its store: `$STRATA_QUICKSTART_PATH`, or
/// `$XDG_DATA_HOME/strata/Quickstart.strata` (`~/.local/share/strata/Quickstart.strata`).
func quickstartURL() -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["STRATA_QUICKSTART_PATH"] { return URL(fileURLWithPath: path) }
    let data = environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
        ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
    return data.appendingPathComponent("strata/Quickstart.strata")
}

let schema = try Schema(entities: [
    EntitySchema(id: 0, name: "Department", columns: [
        ColumnSchema(name: "name", type: .string, isNullable: false, isIndexed: true),
    ]),
    EntitySchema(id: 1, name: "Employee", columns: [
        ColumnSchema(name: "name", type: .string, isNullable: false, keepsTombstone: true),
        ColumnSchema(name: "salary", type: .int64, isNullable: false, isIndexed: true),
        ColumnSchema(name: "department", type: .reference(entity: 0)),
    ]),
])

let url = quickstartURL()
try? FileManager.default.removeItem(at: url)
try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
print("Creating a store at \(url.path)")
var configuration = StoreConfiguration()
configuration.logger.logLevel = .warning
var store = try Store.open(at: url, schema: schema, configuration: configuration)

let engineering = store.allocateKeys(for: 0).lowerBound
let employees = store.allocateKeys(for: 1, count: 1_000)
var hiring = Transaction(author: "quickstart", contextName: "import")
hiring.insert(0, key: engineering, row: Row([.string("Engineering")]))
for key in employees {
    hiring.insert(1, key: key, row: Row([.string("Employee \(key)"), .int(40_000 + key * 97 % 120_000), .reference(engineering)]))
}
print("Saved 1 department and \(employees.count) employees durably as transaction \(try store.commit(hiring))")

var raise = Transaction(author: "quickstart", contextName: "payroll")
raise.update(1, key: 1, row: Row([.string("Employee 1"), .int(250_000), .reference(engineering)]), changedColumns: [1])
for key in employees.dropFirst(500) { raise.delete(1, key: key) }
print("Gave employee 1 a raise and removed 500 employees in transaction \(try store.commit(raise))")

try store.close()
store = try Store.open(at: url, schema: schema, configuration: configuration)
print("Reopened: \(store.count(1)) employees; employee 1 is \(try store.read(1, key: 1)!.values)")
let topEarners = try store.keys(1, column: 1, matching: .range(lower: IndexBound(.int(150_000), inclusive: false), upper: nil))
print("Employees earning over 150,000 (from the salary index): \(topEarners.count)")
let engineers = try store.countKeys(1, column: 2, matching: .equal(.reference(engineering)))
print("Employees in Engineering (from the reference index): \(engineers)")

print("History:")
for transaction in try store.history() {
    let kinds = Dictionary(grouping: transaction.changes, by: \.kind).mapValues(\.count)
    print("  #\(transaction.sequence) by \(transaction.author ?? "-") in \(transaction.contextName ?? "-"): "
        + "\(kinds[.insert] ?? 0) inserts, \(kinds[.update] ?? 0) updates, \(kinds[.delete] ?? 0) deletes")
}

try store.deleteHistory(before: store.lastSequence + 1)
let report = try store.compact()
print("Deleted the history and compacted \(report.segmentsCompacted) segment(s): \(report.bytesBefore) -> \(report.bytesAfter) bytes on disk")
print("Still there after compaction: employee 1 is \(try store.read(1, key: 1)!.values)")
try store.close()
print("Done. Inspect the store with: swift run strata info \(url.path)")
