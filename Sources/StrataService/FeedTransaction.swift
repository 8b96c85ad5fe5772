import Foundation

/// One transaction of the change feed: what one save changed, after which a client resumes
/// with ``token``. `Sendable`.
public struct FeedTransaction: Codable, Sendable, Hashable {
    /// One object a transaction inserted, updated or deleted. `Sendable`.
    public struct Change: Codable, Sendable, Hashable {
        /// `Department` or `Employee`.
        public var entity: String
        /// The object's ID.
        public var id: Int64
        /// `insert`, `update` or `delete`.
        public var type: String

        /// Creates a change.
        public init(entity: String, id: Int64, type: String) {
            self.entity = entity
            self.id = id
            self.type = type
        }
    }

    /// The position after this transaction: the feed's `after` parameter and the SSE `id:`.
    public var token: Int64
    /// When the transaction committed.
    public var timestamp: Date
    /// The objects it changed.
    public var changes: [Change]

    /// Creates a transaction.
    public init(token: Int64, timestamp: Date, changes: [Change]) {
        self.token = token
        self.timestamp = timestamp
        self.changes = changes
    }

    /// The transaction as one server-sent event: `id: <token>`, `event: transaction` and the
    /// JSON on one `data:` line, then the blank line that ends the event.
    public func serverSentEvent(encoder: JSONEncoder) throws -> String {
        let json = String(decoding: try encoder.encode(self), as: UTF8.self)
        return "id: \(token)\nevent: transaction\ndata: \(json)\n\n"
    }
}
