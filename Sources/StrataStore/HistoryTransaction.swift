import Foundation

/// What a history change did.
public enum ChangeKind: UInt8, Sendable, Hashable {
    /// A row was inserted.
    case insert = 0
    /// A row was updated.
    case update = 1
    /// A row was deleted.
    case delete = 2
}

/// One change of a committed transaction, as the history keeps it. `Sendable`.
public struct HistoryChange: Sendable, Hashable {
    /// Insert, update or delete.
    public var kind: ChangeKind
    /// The entity of the changed row.
    public var entity: Int
    /// The key of the changed row.
    public var key: PrimaryKey
    /// The columns an update changed; every column for an insert, none for a delete.
    public var changedColumns: [Int]
    /// The row image written by an insert or update; `nil` for a delete.
    public var row: Row?
    /// For a delete, the values of the columns marked to keep after deletion (others `nil`).
    public var tombstone: Row?
    /// For an update, the committed row before it; for a delete, the full last row. `nil` for
    /// inserts and for transactions committed before stores kept prior rows.
    public var previousRow: Row? = nil
}

/// One committed transaction, as the history keeps it. `Sendable`.
public struct HistoryTransaction: Sendable, Hashable {
    /// The commit's sequence number, increasing from 1.
    public var sequence: UInt64
    /// When the transaction was made.
    public var timestamp: Date
    /// Who made it.
    public var author: String?
    /// The context that saved it.
    public var contextName: String?
    /// The bundle identifier of the process that saved it (`nil` for older records).
    public var bundleID: String? = nil
    /// The id of the process that saved it (`nil` for older records).
    public var processID: Int32? = nil
    /// Its changes, in order.
    public var changes: [HistoryChange]
}
