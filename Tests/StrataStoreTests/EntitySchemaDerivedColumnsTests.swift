import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// `indexedColumns` and `tombstoneColumns` are stored with the entity and follow every change
/// of its columns; equality and the schema hash still depend only on id, name and columns; a
/// store opened with an entity changed in place indexes and keeps tombstones by the change.
@Suite struct EntitySchemaDerivedColumnsTests {
    /// Employee with no index and no tombstone column, changed in place to the test schema's.
    static func changedEmployee() -> EntitySchema {
        var employee = EntitySchema(
            id: 1, name: "Employee",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false),
                ColumnSchema(name: "salary", type: .int64, isNullable: false),
                ColumnSchema(name: "notes", type: .string),
            ])
        #expect(employee.indexedColumns == [])
        #expect(employee.tombstoneColumns == [])
        employee.columns[0].keepsTombstone = true
        employee.columns[1].isIndexed = true
        employee.columns.append(ColumnSchema(name: "department", type: .reference(entity: 0)))
        return employee
    }

    @Test func derivedColumnsFollowChangesAndEqualityIgnoresThem() throws {
        let employee = Self.changedEmployee()
        let built = TestSchema.schema.entities[TestSchema.employee]
        #expect(employee.indexedColumns == [1, 3])
        #expect(employee.tombstoneColumns == [0])
        #expect(employee == built)
        #expect(employee.hashValue == built.hashValue)
        let schema = try Schema(entities: [TestSchema.schema.entities[TestSchema.department], employee])
        #expect(schema == TestSchema.schema)
        #expect(schema.hash == TestSchema.schema.hash)

        var unindexed = employee
        unindexed.columns = Array(employee.columns.prefix(3))
        unindexed.columns[1].isIndexed = false
        #expect(unindexed.indexedColumns == [])
        #expect(unindexed.tombstoneColumns == [0])
        #expect(unindexed != employee)
    }

    @Test func aStoreIndexesAndKeepsTombstonesByTheChangedColumns() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let schema = try Schema(entities: [TestSchema.schema.entities[TestSchema.department], Self.changedEmployee()])
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        var store = try Store.open(at: url, schema: schema, configuration: configuration)
        var insert = Transaction()
        insert.insert(TestSchema.department, key: 1, row: Row([.string("Research"), .double(1)]))
        for key in 1...10 as ClosedRange<Int64> {
            insert.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key), department: 1))
        }
        try store.commit(insert)
        var removal = Transaction()
        removal.delete(TestSchema.employee, key: 4)
        try store.commit(removal)
        try store.close()

        store = try Store.open(at: url, schema: schema, configuration: configuration)
        defer { try? store.close() }
        #expect(try store.countKeys(TestSchema.employee, column: 3, matching: .equal(.reference(1))) == 9)
        let salary = TestSchema.employee(5)[1]
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(salary)) == [5])
        let deletion = try #require(try store.history().last?.changes.first)
        #expect(deletion.kind == .delete)
        #expect(deletion.tombstone == Row([.string("Employee 4"), .null, .null, .null]))
    }
}
