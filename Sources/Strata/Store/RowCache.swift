import Foundation
import StrataStore
import Synchronization

/// The coordinator's row cache: the stored rows its contexts' faults read, shared by every
/// context of the coordinator, as Core Data's coordinator shares its row cache.
///
/// Each store's rows belong to one sequence of the store, the generation: a row is kept only
/// when it was read with the store at that sequence, and a lookup that finds the store at
/// another sequence (any commit: a save of any context or coordinator of the process, a batch
/// request, a history replay, another process's commit a read-only store followed) drops the
/// store's rows first. So a cached row is always the row a read would return now, and its
/// snapshot sequence is the one such a read would report. Bounded: when ``capacity`` rows are
/// held, the cache is emptied before the next row is kept.
final class RowCache: Sendable {
    /// One row's place: its store (by identity), engine entity and primary key.
    private struct Place: Hashable {
        var store: ObjectIdentifier
        var entity: Int
        var key: PrimaryKey
    }

    private struct Contents {
        /// The cached rows.
        var rows: [Place: Row] = [:]
        /// Each store's generation: the sequence its cached rows were read at.
        var generations: [ObjectIdentifier: UInt64] = [:]
    }

    /// The most rows held at once.
    let capacity: Int
    private let contents = Mutex(Contents())

    /// Creates an empty cache holding at most `capacity` rows.
    init(capacity: Int = 16_384) {
        self.capacity = capacity
    }

    /// The row of `store` at (`entity`, `key`) when the cache holds it as of `sequence`, the
    /// store's newest sequence read just before; drops the store's rows of older sequences.
    func row(_ store: PersistentStore, entity: Int, key: PrimaryKey, sequence: UInt64) -> Row? {
        let identity = ObjectIdentifier(store)
        return contents.withLock { contents in
            guard let generation = contents.generations[identity] else { return nil }
            guard generation == sequence else {
                drop(identity, from: &contents)
                return nil
            }
            return contents.rows[Place(store: identity, entity: entity, key: key)]
        }
    }

    /// Keeps `row`, read from `store` at (`entity`, `key`) with the store at `sequence` just
    /// before the read; a row read at an older sequence than the store's cached rows is not kept.
    func keep(_ row: Row, _ store: PersistentStore, entity: Int, key: PrimaryKey, sequence: UInt64) {
        let identity = ObjectIdentifier(store)
        contents.withLock { contents in
            if let generation = contents.generations[identity], generation != sequence {
                guard generation < sequence else { return }
                drop(identity, from: &contents)
            }
            if contents.rows.count >= capacity { contents.rows.removeAll(keepingCapacity: true) }
            contents.generations[identity] = sequence
            contents.rows[Place(store: identity, entity: entity, key: key)] = row
        }
    }

    /// Drops every row of `store` (it was removed from the coordinator).
    func remove(_ store: PersistentStore) {
        contents.withLock { drop(ObjectIdentifier(store), from: &$0) }
    }

    /// The number of rows held.
    var count: Int {
        contents.withLock { $0.rows.count }
    }

    private func drop(_ store: ObjectIdentifier, from contents: inout Contents) {
        contents.generations[store] = nil
        guard !contents.rows.isEmpty else { return }
        if contents.generations.isEmpty {
            contents.rows.removeAll(keepingCapacity: true)
        } else {
            contents.rows = contents.rows.filter { $0.key.store != store }
        }
    }
}
