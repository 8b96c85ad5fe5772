/// The values of a row's fetch-indexed columns, by position in its entity's
/// ``EntitySchema/indexedColumns``: what a commit keeps of a row image for the fetch indexes.
///
/// A commit of rows it already holds keeps the whole row (one reference); a replay, which
/// decodes only the indexed columns of the rows it copies as bytes, keeps those values alone.
/// One reference either way, so that a commit's list of changes stays small.
enum IndexedValues: Sendable {
    /// A whole row of the entity, read at the indexed columns.
    case row(Row)
    /// The values alone, in position order.
    case list([Value])

    /// The value at `position`, whose column is `column` (the entity's indexed column there).
    func value(at position: Int, column: Int) -> Value {
        switch self {
        case .row(let row): row[column]
        case .list(let values): values[position]
        }
    }
}
