import Foundation
internal import StrataStore

/// A store's rows as of a pinned sequence: the store's rows, except those changed since, which
/// are read from the pre-images the generation log kept (and left out when they were inserted
/// since). Fetch-index lookups are corrected the same way. Read-only.
///
/// A row is read from the store before its pre-image is looked up, and pre-images are recorded
/// before their commit, so a commit running meanwhile is never half seen.
final class PinnedRowStore: RowStore {
    let base: any RowStore
    let log: QueryGenerationLog
    /// The pinned sequence.
    let sequence: UInt64

    init(base: any RowStore, log: QueryGenerationLog, sequence: UInt64) {
        self.base = base
        self.log = log
        self.sequence = sequence
    }

    var schema: Schema { base.schema }

    var lastSequence: UInt64 { sequence }

    func allocateKeys(for entity: Int, count: Int) -> ClosedRange<PrimaryKey> {
        base.allocateKeys(for: entity, count: count)
    }

    func read(_ entity: Int, key: PrimaryKey) throws -> Row? {
        let row = try base.read(entity, key: key)
        return log.version(entity, key, at: sequence) ?? row
    }

    func read(_ entity: Int, keys: [PrimaryKey]) throws -> [Row?] {
        let rows = try base.read(entity, keys: keys)
        guard log.hasVersions(entity) else { return rows }
        return zip(keys, rows).map { key, row in log.version(entity, key, at: sequence) ?? row }
    }

    func forEachRow(_ entity: Int, keys: [PrimaryKey], columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws
    {
        var emitted = Set<PrimaryKey>()
        try base.forEachRow(entity, keys: keys, columns: columns) { key, row in
            guard log.version(entity, key, at: sequence) == nil else { return }
            emitted.insert(key)
            try body(key, row)
        }
        for key in keys where !emitted.contains(key) {
            if case .some(.some(let row)) = log.version(entity, key, at: sequence) { try body(key, row) }
        }
    }

    func scan(_ entity: Int, _ body: (PrimaryKey, Row) throws -> Void) throws {
        try scan(entity, columns: nil, body)
    }

    func scan(_ entity: Int, columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws {
        var emitted = Set<PrimaryKey>()
        try base.scan(entity, columns: columns) { key, row in
            guard log.version(entity, key, at: sequence) == nil else { return }
            emitted.insert(key)
            try body(key, row)
        }
        for (key, row) in log.versions(entity, at: sequence).sorted(by: { $0.key < $1.key })
        where !emitted.contains(key) {
            if let row { try body(key, row) }
        }
    }

    func keys(
        _ entity: Int, column: Int, matching query: IndexQuery, descending: Bool, limit: Int?
    ) throws -> [PrimaryKey] {
        if !log.hasVersions(entity) {
            let keys = try base.keys(entity, column: column, matching: query, descending: descending, limit: limit)
            if !log.hasVersions(entity) { return keys }
        }
        let current = try base.keys(entity, column: column, matching: query, descending: descending, limit: nil)
        let versions = log.versions(entity, at: sequence)
        let kept = current.filter { versions[$0] == nil }
        let restored = versions.compactMap { key, row -> (Value, PrimaryKey)? in
            guard let row, query.matches(row[column]) else { return nil }
            return (row[column], key)
        }
        guard !restored.isEmpty else { return Array(kept.prefix(limit ?? Int.max)) }
        var entries = restored
        for (key, row) in zip(kept, try base.read(entity, keys: kept)) {
            if let row { entries.append((row[column], key)) }
        }
        entries.sort { $0.0 < $1.0 || (!($1.0 < $0.0) && $0.1 < $1.1) }
        if descending { entries.reverse() }
        return entries.prefix(limit ?? Int.max).map(\.1)
    }

    func countKeys(_ entity: Int, column: Int, matching query: IndexQuery) throws -> Int {
        if !log.hasVersions(entity) {
            let count = try base.countKeys(entity, column: column, matching: query)
            if !log.hasVersions(entity) { return count }
        }
        return try keys(entity, column: column, matching: query, descending: false, limit: nil).count
    }

    func commit(_ transaction: Transaction) throws -> UInt64 {
        throw StoreError(
            .readOnly,
            "a context pinned to a query generation reads an earlier state of the store; saves go to the store itself")
    }

    func close() throws {}
}
