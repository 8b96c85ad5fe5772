/// The rows of a bulk insert into one entity, each made when it is encoded instead of all before
/// the commit (``Store/commit(_:inserting:)``): the commit never holds them all at once. Made
/// first, 100,000 rows took about 20 MB of fresh memory and a tenth of the insert's time to free
/// again (`perf` of strata-graph-bench B1).
///
/// Row `index` is keyed `keys.lowerBound + index`.
package struct InsertedRows: Sendable {
    /// The entity the rows are of.
    package var entity: Int
    /// The rows' keys, in row order: reserved with ``Store/allocateKeys(for:count:)``.
    package var keys: Range<PrimaryKey>
    /// What each row holds before ``fill`` sets it: the entity's default values.
    package var template: Row
    /// Sets the values of row `index` in `row`, which holds ``template``'s values. Called once a
    /// row, on any thread, rows of a part in order; what it throws fails the commit (the first
    /// failing row's error, as if the rows were made in order).
    package var fill: @Sendable (_ index: Int, _ row: inout Row) throws -> Void

    /// Describes the rows `fill` makes for `keys` from `template`.
    package init(entity: Int, keys: Range<PrimaryKey>, template: Row, fill: @escaping @Sendable (_ index: Int, _ row: inout Row) throws -> Void) {
        self.entity = entity
        self.keys = keys
        self.template = template
        self.fill = fill
    }

    /// The number of rows.
    package var count: Int { keys.count }

    /// Calls `body` with the key and row of each row of `range`, in order. The row is made in
    /// one buffer reused from row to row: `body` copies what it keeps.
    package func forEach(in range: Range<Int>, _ body: (PrimaryKey, Row) throws -> Void) throws {
        var row = template
        for index in range {
            for column in template.values.indices { row.values[column] = template.values[column] }
            try fill(index, &row)
            try body(keys.lowerBound + PrimaryKey(index), row)
        }
    }

    /// `transaction` with an insert of every row appended: what a store that takes operations
    /// only commits.
    package func appended(to transaction: Transaction) throws -> Transaction {
        var transaction = transaction
        transaction.operations.reserveCapacity(transaction.operations.count + count)
        try forEach(in: 0..<count) { key, row in transaction.insert(entity, key: key, row: row) }
        return transaction
    }
}
