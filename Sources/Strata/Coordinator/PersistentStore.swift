import Foundation
import StrataStore

/// A store added to a coordinator: a Strata store directory or an in-memory store.
///
/// `Sendable`; its rows are reached through the coordinator and contexts.
public final class PersistentStore: Sendable {
    /// The store's type: ``SQLiteStoreType`` (a Strata store directory) or ``InMemoryStoreType``.
    public let type: String
    /// Where the store lives (`nil` for an in-memory store without one).
    public let url: URL?
    /// The store's unique identifier, part of every object ID's URI.
    public let identifier: String
    /// The model configuration whose entities the store holds (`nil`: all).
    public let configurationName: String?
    /// The options the store was added with, every key kept (Core Data's `options`).
    // nonisolated(unsafe): set once at creation and never changed; the values are the caller's.
    public nonisolated(unsafe) let options: [AnyHashable: Any]?
    let rows: any RowStore
    /// The row versions pinned query generations read.
    let queryGenerations = QueryGenerationLog()

    init(type: String, url: URL?, identifier: String, configurationName: String?, options: [AnyHashable: Any]?, rows: any RowStore) {
        self.type = type
        self.url = url
        self.identifier = identifier
        self.configurationName = configurationName
        self.options = options
        self.rows = rows
    }

    /// The underlying engine store, for history and maintenance (`nil` for an in-memory store).
    public var engineStore: Store? { rows as? Store }
}
