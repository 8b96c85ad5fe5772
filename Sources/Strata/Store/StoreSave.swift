internal import StrataStore

/// What a save writes to one store (``StoreWriter/save(for:makingRowsAsEncoded:)``): an engine
/// transaction and, when the save only inserts many objects, their rows, made as the engine
/// encodes them instead of held in the transaction.
struct StoreSave {
    /// The transaction: the save's operations, author, condition and consumer cursors.
    var transaction: Transaction
    /// The inserted objects' rows, when they are not in ``transaction``.
    var inserted: InsertedRows?

    /// Whether the save writes nothing to the store.
    var isEmpty: Bool { transaction.operations.isEmpty && inserted == nil }
}
