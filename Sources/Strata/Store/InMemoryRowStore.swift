internal import StrataStore
import StrataSynchronization
import Synchronization

/// A store that keeps rows in memory only (Core Data's in-memory store type): nothing is
/// written to disk and everything is gone when it is removed or the process ends.
final class InMemoryRowStore: RowStore {
    let schema: Schema
    private struct Contents {
        var rows: [[PrimaryKey: Row]]
        var nextKeys: [PrimaryKey]
        var sequence: UInt64 = 0
    }
    private let contents: Lock<Contents>

    /// Creates an empty store for `schema`.
    init(schema: Schema) {
        self.schema = schema
        contents = Lock(
            Contents(
                rows: Array(repeating: [:], count: schema.entities.count),
                nextKeys: Array(repeating: 1, count: schema.entities.count)))
    }

    func allocateKeys(for entity: Int, count: Int) -> ClosedRange<PrimaryKey> {
        contents.withLock { contents in
            let first = contents.nextKeys[entity]
            contents.nextKeys[entity] += PrimaryKey(count)
            return first...(first + PrimaryKey(count) - 1)
        }
    }

    func read(_ entity: Int, key: PrimaryKey) throws -> Row? {
        contents.withLock { $0.rows[entity][key] }
    }

    func read(_ entity: Int, keys: [PrimaryKey]) throws -> [Row?] {
        let rows = contents.withLock { $0.rows[entity] }
        return keys.map { rows[$0] }
    }

    func forEachRow(_ entity: Int, keys: [PrimaryKey], columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws
    {
        let rows = contents.withLock { $0.rows[entity] }
        for key in keys {
            if let row = rows[key] { try body(key, row) }
        }
    }

    func scan(_ entity: Int, _ body: (PrimaryKey, Row) throws -> Void) throws {
        let rows = contents.withLock { $0.rows[entity] }
        for (key, row) in rows.sorted(by: { $0.key < $1.key }) { try body(key, row) }
    }

    func scan(_ entity: Int, columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws {
        try scan(entity, body)
    }

    func keys(
        _ entity: Int, column: Int, matching query: IndexQuery, descending: Bool, limit: Int?
    ) throws -> [PrimaryKey] {
        let rows = contents.withLock { $0.rows[entity] }
        var matches = rows.filter { query.matches($0.value[column]) }.map { ($0.value[column], $0.key) }
        matches.sort { $0.0 < $1.0 || (!($1.0 < $0.0) && $0.1 < $1.1) }
        if descending { matches.reverse() }
        return matches.prefix(limit ?? Int.max).map(\.1)
    }

    func countKeys(_ entity: Int, column: Int, matching query: IndexQuery) throws -> Int {
        try keys(entity, column: column, matching: query, descending: false, limit: nil).count
    }

    func commit(_ transaction: Transaction) throws -> UInt64 {
        try contents.withLock { contents in
            // Conservative: any commit since the condition's sequence may have broken it.
            if let condition = transaction.condition, condition.since != contents.sequence {
                throw StoreError(
                    .writeConflict,
                    "a commit since sequence \(condition.since) may have changed rows this transaction depends on")
            }
            var rows = contents.rows
            for operation in transaction.operations {
                switch operation {
                case .insert(let entity, let key, let row):
                    guard rows[entity][key] == nil else {
                        throw StoreError(.keyConflict, "insert of an existing row \(key)")
                    }
                    rows[entity][key] = row
                    contents.nextKeys[entity] = max(contents.nextKeys[entity], key + 1)
                case .update(let entity, let key, let row, _):
                    guard rows[entity][key] != nil else {
                        throw StoreError(.keyConflict, "update of a missing row \(key)")
                    }
                    rows[entity][key] = row
                case .delete(let entity, let key):
                    guard rows[entity].removeValue(forKey: key) != nil else {
                        throw StoreError(.keyConflict, "delete of a missing row \(key)")
                    }
                }
            }
            contents.rows = rows
            contents.sequence += 1
            return contents.sequence
        }
    }

    var lastSequence: UInt64 {
        contents.withLock { $0.sequence }
    }

    func close() throws {}
}
