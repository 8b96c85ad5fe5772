/// The values of one row, one per column of its entity, in column order.
///
/// `Row` is `Sendable`.
public struct Row: Sendable, Hashable {
    /// The column values, in the entity's column order.
    public var values: [Value]

    /// Creates a row from its column values, in the entity's column order.
    public init(_ values: [Value]) {
        self.values = values
    }

    /// The value of the column at `column`.
    public subscript(column: Int) -> Value {
        get { values[column] }
        set { values[column] = newValue }
    }

    /// The number of columns.
    public var count: Int { values.count }
}
