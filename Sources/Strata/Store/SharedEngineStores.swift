import Foundation
internal import StrataStore
import StrataSynchronization
import Synchronization

/// The writable engine stores open in this process, by store directory.
///
/// The engine lets one writer at a time open a directory (another process gets `locked`). Every
/// coordinator of this process that adds the same directory shares one open engine store instead:
/// the store counts its users and is closed when the last one removes it. A store no
/// coordinator removed is released when the last reference to it goes, as an unshared one is.
final class SharedEngineStores: Sendable {
    /// The process's registry.
    static let shared = SharedEngineStores()

    private struct Entry {
        weak var store: Store?
        var users: Int
        let saveLock: StoreSaveLock
        let queryGenerations: QueryGenerationLog
    }
    private let entries = Lock<[String: Entry]>([:])

    /// The open engine store of the directory at `url`, opened with `schema` and `configuration`
    /// when this process has none open, with the save lock and query-generation log of its users
    /// (so that each user's saves keep the rows another user's pinned contexts read); each call must be
    /// balanced by ``release(_:)``.
    ///
    /// - Throws: `StoreError` `schemaMismatch` when the open store has another schema, and what
    ///   ``Store/open(at:schema:configuration:)`` throws.
    func acquire(
        at url: URL, schema: Schema, configuration: StoreConfiguration
    ) throws -> (Store, StoreSaveLock, QueryGenerationLog) {
        let path = Self.key(url)
        return try entries.withLock { entries in
            if let entry = entries[path], let store = entry.store, !store.isClosed {
                guard store.schema == schema else {
                    throw StoreError(
                        .schemaMismatch, "the store is open in this process with another schema", path: url.path)
                }
                entries[path]?.users += 1
                return (store, entry.saveLock, entry.queryGenerations)
            }
            let store = try Store.open(at: url, schema: schema, configuration: configuration)
            let entry = Entry(store: store, users: 1, saveLock: StoreSaveLock(), queryGenerations: QueryGenerationLog())
            entries[path] = entry
            return (store, entry.saveLock, entry.queryGenerations)
        }
    }

    /// Gives back a store ``acquire(at:schema:configuration:)`` returned, closing it when no other
    /// user is left (a store not acquired here is closed at once).
    ///
    /// - Parameter closing: whether to close the store when no user is left; without it, the
    ///   store is only forgotten, and releases its lock when its last reference goes.
    /// - Throws: what closing the store throws (its log stays intact).
    func release(_ store: Store, closing: Bool = true) throws {
        try entries.withLock { entries in
            if let (path, entry) = entries.first(where: { $0.value.store === store }) {
                guard entry.users == 1 else {
                    entries[path]?.users -= 1
                    return
                }
                entries[path] = nil
            }
            // Closed under the lock, so that a store of the same directory opened next finds the
            // directory unlocked.
            if closing { try store.close() }
        }
    }

    /// Whether this process has the engine store of the directory at `url` open for writing.
    func isOpen(at url: URL) -> Bool {
        entries.withLock { entries in entries[Self.key(url)]?.store.map { !$0.isClosed } ?? false }
    }

    /// The registry key of a store directory: its standardized path, symbolic links resolved.
    private static func key(_ url: URL) -> String {
        url.standardizedFileURL.resolvingSymlinksInPath().path
    }
}
