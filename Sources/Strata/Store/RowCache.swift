import Foundation
internal import StrataStore
import StrataSynchronization
import Synchronization

/// The coordinator's row cache: the stored rows its contexts' faults read, shared by every
/// context of the coordinator, as Core Data's coordinator shares its row cache.
///
/// Each row is kept with the store's newest sequence read just before it was read, and served
/// only while the store is still at that sequence: any commit (a save of any context or
/// coordinator of the process, a batch request, a history replay, a commit of another process
/// a read-only store followed) makes every row of the store stale at once. So a cached row is
/// always the row a read would return now, with the snapshot sequence such a read would report.
///
/// Bounded and cheap: per store, a direct-mapped table of ``capacity`` entries by primary key
/// (no hashing, no eviction work; a row takes its entry from whatever row held it), in pages of
/// up to 256 entries made when a row first lands in them: a container opened for a few reads
/// makes a few pages, not the whole table (which took a third of the object graph's cold open
/// and first read, W3, to make and free).
final class RowCache: Sendable {
    /// One cached row.
    private struct Entry {
        /// The engine entity.
        var entity: Int
        /// The primary key.
        var key: PrimaryKey
        /// The store's sequence read just before the row.
        var sequence: UInt64
        /// The row: an engine store's as its encoded bytes (a few dozen bytes, not a ``Row``).
        var row: StoredRow
    }

    /// The entries of one store.
    private struct StoreRows {
        /// The store's identity.
        var store: ObjectIdentifier
        /// The bits of a position within its page.
        let pageShift: Int
        /// The table, ``capacity`` entries in pages of `1 << pageShift`; a page no row has
        /// landed in is empty.
        var pages: [[Entry?]]

        /// The empty table of `store`, of `capacity` entries.
        init(store: ObjectIdentifier, capacity: Int) {
            self.store = store
            pageShift = min(8, capacity.trailingZeroBitCount)
            pages = Array(repeating: [], count: capacity >> pageShift)
        }

        /// The entry at `position`.
        subscript(position: Int) -> Entry? {
            let page = pages[position >> pageShift]
            return page.isEmpty ? nil : page[position & ((1 << pageShift) - 1)]
        }

        /// Puts `entry` at `position`, making its page first if need be.
        mutating func set(_ entry: Entry, at position: Int) {
            let page = position >> pageShift
            if pages[page].isEmpty { pages[page] = Array(repeating: nil, count: 1 << pageShift) }
            pages[page][position & ((1 << pageShift) - 1)] = entry
        }
    }

    /// The entries of one store table; a power of two.
    let capacity: Int
    /// The tables of the stores that have kept a row.
    private let tables = Lock<[StoreRows]>([])

    /// Creates an empty cache of `capacity` entries per store (rounded up to a power of two).
    init(capacity: Int = 16_384) {
        var size = 1
        while size < capacity { size *= 2 }
        self.capacity = size
    }

    /// The position of (`entity`, `key`) in a store's table.
    private func position(_ entity: Int, _ key: PrimaryKey) -> Int {
        (Int(truncatingIfNeeded: key) &+ entity &* 0x9E37_79B1) & (capacity - 1)
    }

    /// The row of `store` at (`entity`, `key`) when the cache holds it as of `sequence`, the
    /// store's newest sequence read just before.
    func row(_ store: PersistentStore, entity: Int, key: PrimaryKey, sequence: UInt64) -> StoredRow? {
        let identity = ObjectIdentifier(store)
        return tables.withLock { tables in
            tables.firstIndex { $0.store == identity }.flatMap {
                row(in: tables[$0], entity: entity, key: key, sequence: sequence)
            }
        }
    }

    /// The rows of `store` at `entity` and each of `keys` the cache holds as of `sequence`, the
    /// store's newest sequence read just before, in the order of `keys` (`nil` for a row it
    /// does not hold); looked up under one lock.
    func rows(_ store: PersistentStore, entity: Int, keys: [PrimaryKey], sequence: UInt64) -> [StoredRow?] {
        let identity = ObjectIdentifier(store)
        return tables.withLock { tables in
            guard let table = tables.firstIndex(where: { $0.store == identity }) else {
                return Array(repeating: nil, count: keys.count)
            }
            return keys.map { row(in: tables[table], entity: entity, key: $0, sequence: sequence) }
        }
    }

    /// The row of `table` at (`entity`, `key`) when it holds it as of `sequence`.
    private func row(in table: borrowing StoreRows, entity: Int, key: PrimaryKey, sequence: UInt64) -> StoredRow? {
        guard let entry = table[position(entity, key)], entry.key == key, entry.entity == entity,
            entry.sequence == sequence
        else { return nil }
        return entry.row
    }

    /// Keeps `row`, read from `store` at (`entity`, `key`) with the store at `sequence` just
    /// before the read.
    func keep(_ row: StoredRow, _ store: PersistentStore, entity: Int, key: PrimaryKey, sequence: UInt64) {
        keep(CollectionOfOne((key: key, row: row)), store, entity: entity, sequence: sequence)
    }

    /// Keeps `rows` (each with its primary key), read from `store` at `entity` with the store at
    /// `sequence` just before the read, under one lock.
    func keep(
        _ rows: some Collection<(key: PrimaryKey, row: StoredRow)>, _ store: PersistentStore, entity: Int,
        sequence: UInt64
    ) {
        guard !rows.isEmpty else { return }
        let identity = ObjectIdentifier(store)
        tables.withLock { tables in
            let table: Int
            if let found = tables.firstIndex(where: { $0.store == identity }) {
                table = found
            } else {
                table = tables.count
                tables.append(StoreRows(store: identity, capacity: capacity))
            }
            for (key, row) in rows {
                tables[table].set(Entry(entity: entity, key: key, sequence: sequence, row: row), at: position(entity, key))
            }
        }
    }

    /// Drops every row of `store` (it was removed from the coordinator).
    func remove(_ store: PersistentStore) {
        let identity = ObjectIdentifier(store)
        tables.withLock { $0.removeAll { $0.store == identity } }
    }

    /// The number of entries of the pages made, held or not.
    var entriesMade: Int {
        tables.withLock { tables in tables.reduce(0) { total, table in total + table.pages.reduce(0) { $0 + $1.count } } }
    }

    /// The number of rows held, current or stale.
    var count: Int {
        tables.withLock { tables in
            tables.reduce(0) { total, table in total + table.pages.reduce(0) { $0 + $1.count { $0 != nil } } }
        }
    }
}
