import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Every column type survives commit, read, close, reopen (from the checkpoint and by full
/// replay), scan and history; invalid values and key conflicts write nothing.
@Suite struct RoundTripTests {
    /// Entity ids of ``schema``.
    static let target = 0
    static let allTypes = 1
    static let required = 2

    /// Target (referenced), AllTypes (one nullable column of every type) and Required (every
    /// column non-nullable, one kept in tombstones).
    static let schema = try! Schema(entities: [
        EntitySchema(id: 0, name: "Target", columns: [ColumnSchema(name: "name", type: .string)]),
        EntitySchema(
            id: 1, name: "AllTypes",
            columns: [
                ColumnSchema(name: "i16", type: .int16),
                ColumnSchema(name: "i32", type: .int32),
                ColumnSchema(name: "i64", type: .int64, isIndexed: true),
                ColumnSchema(name: "float", type: .float),
                ColumnSchema(name: "double", type: .double),
                ColumnSchema(name: "decimal", type: .decimal),
                ColumnSchema(name: "bool", type: .bool),
                ColumnSchema(name: "string", type: .string, isIndexed: true),
                ColumnSchema(name: "date", type: .date),
                ColumnSchema(name: "binary", type: .binary),
                ColumnSchema(name: "uuid", type: .uuid),
                ColumnSchema(name: "uri", type: .uri),
                ColumnSchema(name: "transformable", type: .transformable),
                ColumnSchema(name: "target", type: .reference(entity: 0)),
            ]),
        EntitySchema(
            id: 2, name: "Required",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, keepsTombstone: true),
                ColumnSchema(name: "count", type: .int16, isNullable: false),
                ColumnSchema(name: "target", type: .reference(entity: 0), isNullable: false),
            ]),
    ])

    /// A megabyte of bytes that do not compress to nothing.
    static let megabyte: Data = {
        var generator = SplitMix64(seed: 42)
        return Data((0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next() >> 13) })
    }()

    /// The rows written under keys 1, 2, 3, ... of AllTypes.
    static let rows: [Row] = [
        // Minimums and empties.
        Row([
            .int(Int64(Int16.min)), .int(Int64(Int32.min)), .int(Int64.min), .float(-.greatestFiniteMagnitude),
            .double(-.infinity), .decimal(Decimal(string: "-79228162514264337593543950335")!), .bool(false),
            .string(""), .date(.distantPast), .data(Data()),
            .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
            .uri(URL(string: "https://example.com/")!), .data(Data()), .reference(1),
        ]),
        // Maximums, big values and unicode.
        Row([
            .int(Int64(Int16.max)), .int(Int64(Int32.max)), .int(Int64.max), .float(.infinity),
            .double(.infinity), .decimal(Decimal(string: "79228162514264337593543950335")!), .bool(true),
            .string("👩‍👩‍👧‍👦 e\u{301} é 漢字かなカナ 한국어 \u{0} tab\tnewline\n"), .date(.distantFuture), .data(megabyte),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri(URL(string: "https://user@example.com:8080/a%20b/%E2%9C%93?q=1&r=%F0%9F%98%80#frag")!),
            .data(Data((0..<4096).map { UInt8($0 % 251) })), .reference(Int64.max),
        ]),
        // Zeros, signed zeros, NaN payloads, small fractions.
        Row([
            .int(0), .int(-1), .int(1), .float(Float(bitPattern: 0x7FC0_1234)),
            .double(Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)), .decimal(Decimal(string: "-0.00000000000000012345")!),
            .bool(false), .string(String(repeating: "x", count: 10_000)),
            .date(Date(timeIntervalSinceReferenceDate: 123_456.789_012_5)), .data(Data([0])),
            .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
            .uri(URL(string: "file:///tmp/a%20b.strata")!),
            .data(Data(repeating: 0xFF, count: 3)), .reference(2),
        ]),
        Row([
            .int(-42), .int(70_000), .int(-9_000_000_000), .float(-0.0), .double(-0.0), .decimal(Decimal(0)),
            .bool(true), .string("a\u{300}\u{301}\u{302} Z\u{0351}\u{0352}"), .date(Date(timeIntervalSince1970: 0)),
            .data(Data("binary".utf8)), .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!),
            .uri(URL(string: "x-coredata://8E5B1D90-3F0A-4C4C-9B7A-2B1F1C0E9D11/Employee/p42")!),
            .data(Data([1, 2, 3])), .reference(3),
        ]),
        Row([
            .int(1), .int(2), .int(3), .float(.leastNonzeroMagnitude), .double(.leastNonzeroMagnitude),
            .decimal(Decimal(sign: .plus, exponent: 100, significand: 12345)), .bool(false), .string("𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🇫🇷"),
            .date(Date(timeIntervalSinceReferenceDate: -1e-6)), .data(Data(count: 70_000)), .uuid(UUID()),
            .uri(URL(string: "mailto:someone@example.com")!), .data(Data()), .reference(1),
        ]),
        // Nil in every nullable column.
        Row(Array(repeating: .null, count: 14)),
    ]

    /// Whether two values are the same, comparing floating-point numbers by bit pattern.
    static func identical(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        default: return a == b
        }
    }

    /// Whether two rows are the same, column by column, with ``identical(_:_:)``.
    static func identical(_ a: Row?, _ b: Row?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.count == b.count && zip(a.values, b.values).allSatisfy { identical($0, $1) }
    }

    /// The mismatching columns of two rows, for failure messages.
    static func differences(_ a: Row?, _ b: Row?) -> String {
        guard let a, let b, a.count == b.count else { return "\(String(describing: a)) vs \(String(describing: b))" }
        return a.values.indices.filter { !identical(a[$0], b[$0]) }.map { "column \($0): \(a[$0]) vs \(b[$0])" }
            .joined(separator: "; ")
    }

    /// Checks every row through read, scan, history and the fetch indexes.
    static func checkContents(_ store: Store, _ stage: Comment) throws {
        for (index, expected) in rows.enumerated() {
            let actual = try store.read(allTypes, key: Int64(index + 1))
            #expect(identical(actual, expected), "\(stage) read of row \(index + 1): \(differences(actual, expected))")
        }
        var scanned: [PrimaryKey: Row] = [:]
        try store.scan(allTypes) { key, row in
            #expect(scanned.updateValue(row, forKey: key) == nil, "\(stage) scan returned key \(key) twice")
        }
        #expect(scanned.keys.sorted() == Array(1...Int64(rows.count)), "\(stage) scan keys")
        for (key, row) in scanned {
            #expect(
                identical(row, rows[Int(key) - 1]),
                "\(stage) scan of row \(key): \(differences(row, rows[Int(key) - 1]))")
        }
        let history = try store.history()
        #expect(history.count == 2, "\(stage) history")
        let changes = history.last?.changes ?? []
        #expect(changes.map(\.key) == Array(1...Int64(rows.count)), "\(stage) history keys")
        for change in changes {
            #expect(change.kind == .insert && change.entity == allTypes && change.changedColumns == Array(0..<14))
            #expect(
                identical(change.row, rows[Int(change.key) - 1]),
                "\(stage) history row \(change.key): \(differences(change.row, rows[Int(change.key) - 1]))")
        }
        #expect(try store.keys(allTypes, column: 7, matching: .equal(.string(""))) == [1], "\(stage) string index")
        #expect(try store.keys(allTypes, column: 7, matching: .equal(.null)) == [6], "\(stage) null in string index")
        #expect(
            try store.keys(allTypes, column: 2, matching: .range(lower: nil, upper: nil)) == [1, 4, 3, 5, 2],
            "\(stage) int64 index order")
        #expect(
            try store.keys(allTypes, column: 13, matching: .equal(.reference(1))) == [1, 5], "\(stage) reference index")
    }

    @Test func everyColumnTypeSurvivesCommitReopenScanAndHistory() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.blockSize = 4096
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: configuration)
        var targets = Transaction()
        for key in store!.allocateKeys(for: Self.target, count: 3) {
            targets.insert(Self.target, key: key, row: Row([.string("t\(key)")]))
        }
        try store!.commit(targets)
        var transaction = Transaction(author: "round trip")
        let keys = store!.allocateKeys(for: Self.allTypes, count: Self.rows.count)
        #expect(keys == 1...Int64(Self.rows.count))
        for (key, row) in zip(keys, Self.rows) { transaction.insert(Self.allTypes, key: key, row: row) }
        #expect(try store!.commit(transaction) == 2)
        try Self.checkContents(store!, "before close")
        try store!.close()
        store = nil

        store = try Store.open(at: url, schema: Self.schema, configuration: configuration)
        try Self.checkContents(store!, "after reopen")
        try store!.close()
        store = nil

        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: nil, configuration: configuration)
        try Self.checkContents(store!, "after full replay")
        try store!.close()
    }

    @Test func updatesToNilAndBackSurviveReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        var insert = Transaction()
        insert.insert(Self.allTypes, key: 1, row: Self.rows[1])
        try store!.commit(insert)
        var toNil = Transaction()
        toNil.update(Self.allTypes, key: 1, row: Self.rows[5], changedColumns: Array(0..<14))
        try store!.commit(toNil)
        #expect(Self.identical(try store!.read(Self.allTypes, key: 1), Self.rows[5]))
        #expect(try store!.keys(Self.allTypes, column: 13, matching: .equal(.reference(Int64.max))).isEmpty)
        #expect(try store!.keys(Self.allTypes, column: 2, matching: .equal(.null)) == [1])
        var back = Transaction()
        back.update(Self.allTypes, key: 1, row: Self.rows[2], changedColumns: Array(0..<14))
        try store!.commit(back)
        try store!.close()
        store = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        let row = try store!.read(Self.allTypes, key: 1)
        #expect(Self.identical(row, Self.rows[2]), "\(Self.differences(row, Self.rows[2]))")
        let history = try store!.history()
        #expect(history.map { $0.changes.map(\.kind) } == [[.insert], [.update], [.update]])
        #expect(Self.identical(history[1].changes[0].row, Self.rows[5]))
        #expect(try store!.keys(Self.allTypes, column: 2, matching: .equal(.null)).isEmpty)
        #expect(try store!.keys(Self.allTypes, column: 13, matching: .equal(.reference(2))) == [1])
        try store!.close()
    }

    /// A decimal NaN (`NSDecimalNumber.notANumber`) is accepted by the column, so it must read
    /// back, and the log holding it must replay.
    @Test func decimalNaNReadsBackAndReplays() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        var transaction = Transaction()
        transaction.insert(Self.allTypes, key: 1, row: Self.allTypes(5, .decimal(.nan)))
        transaction.insert(Self.allTypes, key: 2, row: Self.allTypes(5, .decimal(Decimal(string: "-1.5")!)))
        try store!.commit(transaction)
        func check(_ stage: Comment) throws {
            guard case .decimal(let value)? = try store!.read(Self.allTypes, key: 1)?[5] else {
                Issue.record("\(stage): row 1 has no decimal")
                return
            }
            #expect(value.isNaN, "\(stage)")
            #expect(try store!.read(Self.allTypes, key: 2)?[5] == .decimal(Decimal(string: "-1.5")!), "\(stage)")
            #expect(try store!.history().first?.changes.count == 2, "\(stage)")
        }
        try check("before close")
        store = nil  // not closed: the next open replays the log
        store = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        try check("after replay")
        try store!.close()
    }

    // MARK: - Invalid values

    /// A transaction operation that must be refused with `invalidValue`.
    struct InvalidCase: Sendable, CustomTestStringConvertible {
        var name: String
        var operation: StrataStore.Operation
        var testDescription: String { name }
    }

    /// A valid AllTypes row with `value` in `column`.
    static func allTypes(_ column: Int, _ value: Value) -> Row {
        var row = rows[5]
        row[column] = value
        return row
    }

    static let invalidCases: [InvalidCase] = [
        InvalidCase(name: "string in int64", operation: .insert(entity: 1, key: 10, row: allTypes(2, .string("1")))),
        InvalidCase(name: "int in string", operation: .insert(entity: 1, key: 10, row: allTypes(7, .int(1)))),
        InvalidCase(name: "double in float", operation: .insert(entity: 1, key: 10, row: allTypes(3, .double(1)))),
        InvalidCase(name: "int in reference", operation: .insert(entity: 1, key: 10, row: allTypes(13, .int(1)))),
        InvalidCase(
            name: "reference in int64", operation: .insert(entity: 1, key: 10, row: allTypes(2, .reference(1)))),
        InvalidCase(name: "string in binary", operation: .insert(entity: 1, key: 10, row: allTypes(9, .string("x")))),
        InvalidCase(
            name: "int16 above range",
            operation: .insert(entity: 1, key: 10, row: allTypes(0, .int(Int64(Int16.max) + 1)))),
        InvalidCase(
            name: "int16 below range",
            operation: .insert(entity: 1, key: 10, row: allTypes(0, .int(Int64(Int16.min) - 1)))),
        InvalidCase(
            name: "int32 above range",
            operation: .insert(entity: 1, key: 10, row: allTypes(1, .int(Int64(Int32.max) + 1)))),
        InvalidCase(name: "reference key 0", operation: .insert(entity: 1, key: 10, row: allTypes(13, .reference(0)))),
        InvalidCase(
            name: "reference key -5", operation: .insert(entity: 1, key: 10, row: allTypes(13, .reference(-5)))),
        InvalidCase(
            name: "nil in non-nullable",
            operation: .insert(entity: 2, key: 10, row: Row([.null, .int(1), .reference(1)]))),
        InvalidCase(
            name: "nil reference in non-nullable",
            operation: .insert(entity: 2, key: 10, row: Row([.string("a"), .int(1), .null]))),
        InvalidCase(
            name: "too few columns", operation: .insert(entity: 2, key: 10, row: Row([.string("a"), .int(1)]))),
        InvalidCase(
            name: "too many columns",
            operation: .insert(entity: 2, key: 10, row: Row([.string("a"), .int(1), .reference(1), .null]))),
        InvalidCase(name: "no columns", operation: .insert(entity: 0, key: 10, row: Row([]))),
        InvalidCase(
            name: "update with wrong type",
            operation: .update(
                entity: 2, key: 1, row: Row([.string("a"), .string("1"), .reference(1)]), changedColumns: [1])),
        InvalidCase(
            name: "update with int16 out of range",
            operation: .update(
                entity: 2, key: 1, row: Row([.string("a"), .int(40_000), .reference(1)]), changedColumns: [1])),
        InvalidCase(
            name: "update to nil in non-nullable",
            operation: .update(entity: 2, key: 1, row: Row([.string("a"), .null, .reference(1)]), changedColumns: [1])),
        InvalidCase(
            name: "update with wrong column count",
            operation: .update(entity: 2, key: 1, row: Row([.string("a")]), changedColumns: [0])),
        InvalidCase(
            name: "update naming a column that does not exist",
            operation: .update(
                entity: 2, key: 1, row: Row([.string("a"), .int(1), .reference(1)]), changedColumns: [3])),
        InvalidCase(name: "unknown entity", operation: .insert(entity: 3, key: 10, row: Row([.string("a")]))),
        InvalidCase(name: "primary key 0", operation: .insert(entity: 0, key: 0, row: Row([.string("a")]))),
        InvalidCase(name: "negative primary key", operation: .delete(entity: 0, key: -1)),
    ]

    @Test(arguments: invalidCases)
    func invalidValueWritesNothing(_ invalid: InvalidCase) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        var setup = Transaction()
        setup.insert(Self.target, key: 1, row: Row([.string("t")]))
        setup.insert(Self.required, key: 1, row: Row([.string("r"), .int(7), .reference(1)]))
        try store.commit(setup)
        let before = try RoundTripSnapshot(store, url)

        var transaction = Transaction()
        transaction.insert(Self.target, key: 2, row: Row([.string("valid, first")]))
        transaction.operations.append(invalid.operation)
        transaction.insert(Self.target, key: 3, row: Row([.string("valid, last")]))
        let error = #expect(throws: StoreError.self) { try store.commit(transaction) }
        #expect(error?.code == .invalidValue, "\(String(describing: error))")
        #expect(try RoundTripSnapshot(store, url) == before)

        var next = Transaction()
        next.insert(Self.target, key: 2, row: Row([.string("after")]))
        #expect(try store.commit(next) == 2)
        try store.close()
        let reopened = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        #expect(reopened.count(Self.target) == 2 && reopened.count(Self.required) == 1)
        #expect(try reopened.read(Self.target, key: 3) == nil)
        #expect(try reopened.history().map(\.sequence) == [1, 2])
        try reopened.close()
    }

    // MARK: - Key conflicts

    /// A transaction that must be refused with `keyConflict`.
    struct ConflictCase: Sendable, CustomTestStringConvertible {
        var name: String
        var operations: [StrataStore.Operation]
        var testDescription: String { name }
    }

    static let conflictCases: [ConflictCase] = [
        ConflictCase(
            name: "insert of a live key", operations: [.insert(entity: 0, key: 1, row: Row([.string("again")]))]),
        ConflictCase(
            name: "insert of a live key with tombstones",
            operations: [.insert(entity: 2, key: 1, row: Row([.string("a"), .int(1), .reference(1)]))]),
        ConflictCase(
            name: "update of a missing key",
            operations: [.update(entity: 0, key: 99, row: Row([.string("x")]), changedColumns: [0])]),
        ConflictCase(
            name: "update of a deleted key",
            operations: [.update(entity: 0, key: 2, row: Row([.string("x")]), changedColumns: [0])]),
        ConflictCase(name: "delete of a missing key", operations: [.delete(entity: 0, key: 99)]),
        ConflictCase(name: "delete of a deleted key", operations: [.delete(entity: 0, key: 2)]),
        ConflictCase(name: "delete of a missing key with tombstones", operations: [.delete(entity: 2, key: 99)]),
        ConflictCase(name: "delete of a deleted key with tombstones", operations: [.delete(entity: 2, key: 2)]),
        ConflictCase(
            name: "insert twice in one transaction",
            operations: [
                .insert(entity: 0, key: 50, row: Row([.string("a")])),
                .insert(entity: 0, key: 50, row: Row([.string("b")])),
            ]),
        ConflictCase(
            name: "delete twice in one transaction",
            operations: [.delete(entity: 0, key: 1), .delete(entity: 0, key: 1)]),
        ConflictCase(
            name: "update after delete in one transaction",
            operations: [
                .delete(entity: 0, key: 1), .update(entity: 0, key: 1, row: Row([.string("x")]), changedColumns: [0]),
            ]),
        ConflictCase(
            name: "good operations then a conflict",
            operations: [
                .insert(entity: 0, key: 51, row: Row([.string("new")])),
                .update(entity: 0, key: 1, row: Row([.string("changed")]), changedColumns: [0]),
                .delete(entity: 2, key: 1),
                .update(entity: 1, key: 1, row: allTypes(2, .int(5)), changedColumns: [2]),
                .insert(entity: 0, key: 1, row: Row([.string("conflict")])),
            ]),
    ]

    @Test(arguments: conflictCases)
    func keyConflictWritesNothing(_ conflict: ConflictCase) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        var setup = Transaction()
        setup.insert(Self.target, key: 1, row: Row([.string("one")]))
        setup.insert(Self.target, key: 2, row: Row([.string("two")]))
        setup.insert(Self.required, key: 1, row: Row([.string("r1"), .int(1), .reference(1)]))
        setup.insert(Self.required, key: 2, row: Row([.string("r2"), .int(2), .reference(2)]))
        setup.insert(Self.allTypes, key: 1, row: Self.rows[5])
        try store.commit(setup)
        var removal = Transaction()
        removal.delete(Self.target, key: 2)
        removal.delete(Self.required, key: 2)
        try store.commit(removal)
        let before = try RoundTripSnapshot(store, url)

        var transaction = Transaction()
        transaction.operations = conflict.operations
        let error = #expect(throws: StoreError.self) { try store.commit(transaction) }
        #expect(error?.code == .keyConflict, "\(String(describing: error))")
        #expect(try RoundTripSnapshot(store, url) == before)
        #expect(try store.keys(Self.allTypes, column: 2, matching: .equal(.int(5))).isEmpty)
        #expect(try store.keys(Self.allTypes, column: 2, matching: .equal(.null)) == [1])
        try store.close()
        let reopened = try Store.open(at: url, schema: Self.schema, configuration: TestSchema.configuration())
        #expect(try RoundTripSnapshot(reopened, url).rows == before.rows)
        #expect(reopened.lastSequence == 2)
        try reopened.close()
    }
}

/// What a store holds, to compare before and after a refused commit.
private struct RoundTripSnapshot: Equatable {
    /// Every entity's live rows by key.
    var rows: [[PrimaryKey: Row]]
    /// The newest sequence.
    var lastSequence: UInt64
    /// The history's sequences.
    var history: [UInt64]
    /// The bytes of every file under `segments/`.
    var segmentBytes: Int64

    init(_ store: Store, _ url: URL) throws {
        rows = try store.schema.entities.indices.map { entity in
            var rows: [PrimaryKey: Row] = [:]
            try store.scan(entity) { rows[$0] = $1 }
            return rows
        }
        lastSequence = store.lastSequence
        history = try store.history().map(\.sequence)
        segmentBytes = StoreFiles.segmentFileBytes(url)
    }
}
