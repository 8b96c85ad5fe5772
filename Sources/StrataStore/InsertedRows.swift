/// The rows of a bulk insert, each made when it is encoded instead of all before the commit
/// (``Store/commit(_:inserting:)``): the commit never holds them all at once. Made first,
/// 100,000 rows took about 20 MB of fresh memory and a tenth of a batch insert's time to free
/// again (`perf` of strata-graph-bench B1).
package struct InsertedRows: Sendable {
    /// The number of rows.
    package var count: Int
    /// The entities the rows are of.
    package var entities: Set<Int>
    /// The entity and key of row `index`: keys reserved with ``Store/allocateKeys(for:count:)``.
    package var target: @Sendable (_ index: Int) -> (entity: Int, key: PrimaryKey)
    /// Makes row `index` in `row`, which holds the row made before it on the same thread (or no
    /// value): every column is set. Called once a row, on any thread, rows of a part in order;
    /// what it throws fails the commit (the first failing row's error, as if the rows were
    /// made in order).
    package var make: @Sendable (_ index: Int, _ row: inout Row) throws -> Void

    /// Describes `count` rows of `entities` that `make` makes under the keys `target` gives.
    package init(
        count: Int, entities: Set<Int>, target: @escaping @Sendable (_ index: Int) -> (entity: Int, key: PrimaryKey),
        make: @escaping @Sendable (_ index: Int, _ row: inout Row) throws -> Void
    ) {
        self.count = count
        self.entities = entities
        self.target = target
        self.make = make
    }

    /// Describes rows of `entity` keyed `keys`, in order, each a copy of `template` (the
    /// entity's defaults) whose values `fill` sets.
    package init(
        entity: Int, keys: Range<PrimaryKey>, template: Row,
        fill: @escaping @Sendable (_ index: Int, _ row: inout Row) throws -> Void
    ) {
        self.init(count: keys.count, entities: [entity], target: { (entity, keys.lowerBound + PrimaryKey($0)) }) {
            index, row in
            if row.count == template.count {
                for column in template.values.indices { row.values[column] = template.values[column] }
            } else {
                row = template
            }
            try fill(index, &row)
        }
    }

    /// Calls `body` with the entity, key and row of each row of `range`, in order. The row is
    /// made in one buffer reused from row to row: `body` copies what it keeps.
    package func forEach(in range: Range<Int>, _ body: (Int, PrimaryKey, Row) throws -> Void) throws {
        var row = Row([])
        for index in range {
            try make(index, &row)
            let (entity, key) = target(index)
            try body(entity, key, row)
        }
    }

    /// `transaction` with an insert of every row appended: what a store that takes operations
    /// only commits.
    package func appended(to transaction: Transaction) throws -> Transaction {
        var transaction = transaction
        transaction.operations.reserveCapacity(transaction.operations.count + count)
        try forEach(in: 0..<count) { entity, key, row in transaction.insert(entity, key: key, row: row) }
        return transaction
    }
}
