import Foundation

/// The primary key of a row, allocated per entity by the store: positive, monotonic, never reused.
public typealias PrimaryKey = Int64

/// One change a transaction makes.
public enum Operation: Sendable, Hashable {
    /// Insert a row under a key from ``Store/allocateKeys(for:count:)``.
    case insert(entity: Int, key: PrimaryKey, row: Row)
    /// Replace a live row's image; `changedColumns` names the columns that changed.
    case update(entity: Int, key: PrimaryKey, row: Row, changedColumns: [Int])
    /// Delete a live row. The store keeps its tombstone columns in the history.
    case delete(entity: Int, key: PrimaryKey)

    /// The entity the operation touches.
    public var entity: Int {
        switch self {
        case .insert(let entity, _, _), .update(let entity, _, _, _), .delete(let entity, _): return entity
        }
    }

    /// The key of the row the operation touches.
    public var key: PrimaryKey {
        switch self {
        case .insert(_, let key, _), .update(_, let key, _, _), .delete(_, let key): return key
        }
    }
}

/// A set of changes committed together: all of them or none. `Sendable`.
public struct Transaction: Sendable {
    /// The changes, applied in order.
    public var operations: [Operation] = []
    /// Who made the change, kept in the history (Core Data's `transactionAuthor`).
    public var author: String?
    /// The name of the context that saved, kept in the history.
    public var contextName: String?
    /// When the change was made. The default is the time the transaction was created.
    public var timestamp: Date = Date()
    /// Overrides the store's durability for this commit. The default is `nil` (the store's).
    public var durability: Durability?
    /// What the commits since the writer's reads must not have changed; `nil` (the default):
    /// the transaction commits whatever was committed since.
    public var condition: CommitCondition?
    /// The bundle identifier of the process making the change, kept in the history. The default
    /// is `Bundle.main`'s identifier, else the executable's name.
    public var bundleID: String? = ProcessIdentity.bundleID
    /// The id of the process making the change, kept in the history. The default is this process's.
    public var processID: Int32? = ProcessIdentity.processID
    /// History consumer cursors to advance with this commit, by consumer name: written in the
    /// same record as the changes, so a consumer that applied history and advances its cursor
    /// in one commit does both or neither. Names the store does not know are ignored.
    public var consumerCursors: [String: UInt64] = [:]
    /// Committed rows the caller read, by operation position (`nil`: not read), that the
    /// commit takes as the rows its updates and deletes replace, instead of reading them again,
    /// when the store's newest sequence is still ``knownRowsSequence``. Each must be the whole
    /// row as stored.
    package var knownRows: [Row?]?
    /// The store's newest sequence when ``knownRows`` were read.
    package var knownRowsSequence: UInt64 = 0

    /// Creates an empty transaction.
    public init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }

    /// Adds an insert of `row` under `key`.
    public mutating func insert(_ entity: Int, key: PrimaryKey, row: Row) {
        operations.append(.insert(entity: entity, key: key, row: row))
    }

    /// Adds an update of the row at `key` to `row`; `changedColumns` names what changed.
    public mutating func update(_ entity: Int, key: PrimaryKey, row: Row, changedColumns: [Int]) {
        operations.append(.update(entity: entity, key: key, row: row, changedColumns: changedColumns))
    }

    /// Adds a delete of the row at `key`.
    public mutating func delete(_ entity: Int, key: PrimaryKey) {
        operations.append(.delete(entity: entity, key: key))
    }
}

extension Transaction {
    /// Whether every operation is an insert: no operation reads a row an earlier one wrote.
    var insertsOnly: Bool {
        operations.allSatisfy { if case .insert = $0 { true } else { false } }
    }

    /// Whether, per entity, the keys rise from operation to operation: each key is written
    /// once, so no operation reads a row an earlier one wrote (a batch request's do).
    var writesRisingKeys: Bool {
        // The last key per entity, in a short list: a transaction touches a few entities.
        var last: [(entity: Int, key: PrimaryKey)] = []
        for operation in operations {
            let entity = operation.entity
            let key = operation.key
            if let index = last.firstIndex(where: { $0.entity == entity }) {
                guard key > last[index].key else { return false }
                last[index].key = key
            } else {
                last.append((entity, key))
            }
        }
        return true
    }
}
