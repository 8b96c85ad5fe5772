internal import StrataStore

/// A stored row as the store layer hands it to objects and the row cache: the engine's rows as
/// their encoded bytes (``EncodedRow``, a few dozen bytes decoded column by column when read),
/// the rows of in-memory and pinned stores as the ``Row`` they keep.
enum StoredRow {
    /// A row of decoded values.
    case decoded(Row)
    /// A row as its encoded bytes.
    case encoded(EncodedRow)

    /// The value of the column at `column`.
    @inline(__always)
    subscript(column: Int) -> Value {
        switch self {
        case .decoded(let row): return row.values[column]
        case .encoded(let row): return row.value(column)
        }
    }

    /// The row with every column decoded.
    var row: Row {
        switch self {
        case .decoded(let row): return row
        case .encoded(let row): return row.decoded()
        }
    }
}
