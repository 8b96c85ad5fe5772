import Foundation

/// A generation of the persistent stores: their state after a given save (Core Data's
/// `NSQueryGenerationToken`).
///
/// A context pinned to a generation with
/// ``ManagedObjectContext/setQueryGenerationFrom(_:)`` reads the stores as they were then:
/// faults, fetches and counts see neither the saves of other contexts nor their inserts and
/// deletes, until the context saves, merges, calls `refreshAllObjects()` or `reset()`, or is
/// unpinned. A token keeps its generation readable while it exists, so pass it to another context
/// of the same coordinator to pin that one to the same state. `Sendable`.
public final class QueryGenerationToken: Hashable, Sendable, CustomStringConvertible {
    /// The current generation: pins a context to the stores' state when it is set.
    public static let current = QueryGenerationToken(pins: nil)

    /// The pin of each store by identifier; `nil` for ``current``.
    let pins: [String: GenerationPin]?

    init(pins: [String: GenerationPin]?) {
        self.pins = pins
    }

    /// Tokens are equal when they name the same generation of the same stores.
    public static func == (lhs: QueryGenerationToken, rhs: QueryGenerationToken) -> Bool {
        guard let left = lhs.pins, let right = rhs.pins else { return lhs.pins == nil && rhs.pins == nil }
        return left.count == right.count
            && left.allSatisfy { identifier, pin in
                right[identifier].map { $0.log === pin.log && $0.sequence == pin.sequence } ?? false
            }
    }

    /// Hashes the generation's sequences.
    public func hash(into hasher: inout Hasher) {
        for (identifier, pin) in (pins ?? [:]).sorted(by: { $0.key < $1.key }) {
            hasher.combine(identifier)
            hasher.combine(pin.sequence)
        }
    }

    /// `current`, or the sequence pinned in each store.
    public var description: String {
        guard let pins else { return "QueryGenerationToken.current" }
        return "QueryGenerationToken("
            + pins.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sequence)" }.joined(separator: ", ") + ")"
    }
}

/// One store's pinned sequence, released when the last token holding it goes away; with the
/// store's rows as of that sequence, for fetches and faults.
final class GenerationPin: Sendable {
    let log: QueryGenerationLog
    let sequence: UInt64
    /// The store as the generation reads it.
    let store: PersistentStore

    /// Pins the current generation of `store`.
    init(_ store: PersistentStore) {
        log = store.queryGenerations
        sequence = log.pin(store.rows)
        self.store = PersistentStore(
            type: store.type, url: store.url, identifier: store.identifier, configurationName: store.configurationName,
            options: store.options, rows: PinnedRowStore(base: store.rows, log: log, sequence: sequence))
    }

    deinit {
        log.release(sequence)
    }
}
