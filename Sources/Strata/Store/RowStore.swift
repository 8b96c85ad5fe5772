internal import StrataStore

/// What the coordinator needs from a store: rows by key, scans, fetch-index lookups, commits.
/// The Strata engine's `Store` is one; ``InMemoryRowStore`` is the other.
protocol RowStore: AnyObject, Sendable {
    /// The schema the store holds.
    var schema: Schema { get }
    /// Reserves keys for new rows.
    func allocateKeys(for entity: Int, count: Int) -> ClosedRange<PrimaryKey>
    /// The row at `key`, or `nil`.
    func read(_ entity: Int, key: PrimaryKey) throws -> Row?
    /// The rows at `keys`, in that order (`nil` where none is), each block read once.
    func read(_ entity: Int, keys: [PrimaryKey]) throws -> [Row?]
    /// The live rows at `keys`, in whatever order reads them fastest, with at least `columns`
    /// decoded (every column when `nil`).
    func forEachRow(_ entity: Int, keys: [PrimaryKey], columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws
    /// Every live row of `entity`.
    func scan(_ entity: Int, _ body: (PrimaryKey, Row) throws -> Void) throws
    /// Every live row of `entity`, with at least `columns` decoded (every column when `nil`).
    func scan(_ entity: Int, columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws
    /// The keys whose `column` matches `query`, in index order.
    func keys(
        _ entity: Int, column: Int, matching query: IndexQuery, descending: Bool, limit: Int?
    ) throws -> [PrimaryKey]
    /// The number of rows whose `column` matches `query`.
    func countKeys(_ entity: Int, column: Int, matching query: IndexQuery) throws -> Int
    /// Commits a transaction; returns its sequence number.
    func commit(_ transaction: Transaction) throws -> UInt64
    /// Commits `transaction` (without operations) with the inserts of `rows`; returns its
    /// sequence number.
    func commit(_ transaction: Transaction, inserting rows: InsertedRows) throws -> UInt64
    /// The newest committed sequence number.
    var lastSequence: UInt64 { get }
    /// Closes the store.
    func close() throws
}

extension Store: RowStore {}

extension RowStore {
    /// Commits `transaction` with an insert of each of `rows` added: a store that does not
    /// encode rows as they are made holds them all.
    func commit(_ transaction: Transaction, inserting rows: InsertedRows) throws -> UInt64 {
        try commit(rows.appended(to: transaction))
    }
}
