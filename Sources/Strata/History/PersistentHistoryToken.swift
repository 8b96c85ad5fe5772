import Foundation

/// A position in a store's persistent history: the state after one transaction (Core Data's
/// `NSPersistentHistoryToken`). `Sendable`, `Codable` so a consumer can persist the last token it
/// processed and fetch the history after it on the next launch.
///
/// A token names its store: fetching or deleting history with a token from another store
/// throws ``CoreDataError/Code/persistentHistoryTokenExpired``. Tokens of one store order by
/// position; tokens of different stores order by store identifier, so the order is total.
public final class PersistentHistoryToken: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The identifier of the store the token belongs to (``PersistentStore/identifier``).
    public let storeIdentifier: String
    /// The sequence number of the last transaction the token covers (0: before the first).
    public let sequence: UInt64

    /// Creates a token for the state after transaction `sequence` of the store `storeIdentifier`.
    init(storeIdentifier: String, sequence: UInt64) {
        self.storeIdentifier = storeIdentifier
        self.sequence = sequence
    }

    private enum CodingKeys: String, CodingKey {
        case storeIdentifier = "store"
        case sequence
    }

    /// Whether two tokens name the same position of the same store.
    public static func == (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier && lhs.sequence == rhs.sequence
    }

    /// Whether `lhs` is earlier than `rhs` (for tokens of one store), or its store identifier sorts first.
    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier
            ? lhs.sequence < rhs.sequence : lhs.storeIdentifier < rhs.storeIdentifier
    }

    /// Hashes the store identifier and the sequence.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(sequence)
    }

    /// The store identifier and sequence, for logs.
    public var description: String { "PersistentHistoryToken(\(storeIdentifier):\(sequence))" }
}
