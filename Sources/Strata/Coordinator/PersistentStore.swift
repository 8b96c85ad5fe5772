import Foundation
import StrataStore
import Synchronization

/// A store added to a coordinator: a Strata store directory or an in-memory store.
///
/// `Sendable`; its rows are reached through the coordinator and contexts.
public final class PersistentStore: Sendable {
    /// The kind of a persistent store (Core Data's `NSPersistentStore.StoreType`).
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type's name.
        public let rawValue: String
        /// Creates a type from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A Strata store directory: the segmented, durable log (the default).
        public static let strata = StoreType(rawValue: "Strata")
        /// A store held in memory only.
        public static let inMemory = StoreType(rawValue: "InMemory")
    }

    /// The store's type.
    public let type: StoreType
    /// Where the store lives (`nil` for an in-memory store without one).
    public let url: URL?
    /// The store's unique identifier, part of every object ID's URI.
    public let identifier: String
    /// The model configuration whose entities the store holds (`nil`: all).
    public let configurationName: String?
    /// The options the store was added with, described as strings.
    public let optionDescriptions: [String: String]
    let rows: any RowStore
    /// When this store's saves return (`nil`: the engine store's own setting). Coordinators
    /// sharing one engine store each keep the durability they added it with.
    let durability: Durability?
    /// Held while a save checks this store and commits to it (shared with the coordinators that
    /// share the engine store).
    let saveLock: StoreSaveLock

    init(
        type: StoreType, url: URL?, identifier: String, configurationName: String?, options: [String: String], rows: any RowStore,
        durability: Durability? = nil, saveLock: StoreSaveLock = StoreSaveLock()
    ) {
        self.type = type
        self.url = url
        self.identifier = identifier
        self.configurationName = configurationName
        self.optionDescriptions = options
        self.rows = rows
        self.durability = durability
        self.saveLock = saveLock
    }

    /// The underlying engine store, for history and maintenance (`nil` for an in-memory store).
    /// Every coordinator of the process that added the same directory (not read-only) shares it:
    /// remove the store from its coordinator rather than closing it here.
    public var engineStore: Store? { rows as? Store }

    /// Commits `transaction` with this store's durability; returns its sequence number.
    func commit(_ transaction: Transaction) throws -> UInt64 {
        guard let durability, transaction.durability == nil else { return try rows.commit(transaction) }
        var transaction = transaction
        transaction.durability = durability
        return try rows.commit(transaction)
    }

    /// Whether ``close()`` gave the store back.
    private let isClosed = Atomic<Bool>(false)

    /// Closes the store: an engine store shared with other coordinators of the process closes
    /// with the last of them. Calling it twice is harmless.
    func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let engine = rows as? Store {
            try SharedEngineStores.shared.release(engine)
        } else {
            try rows.close()
        }
    }

    /// A store released without being removed stops counting as a user of a shared engine store
    /// (which, unless closed, releases its lock when its last reference goes).
    deinit {
        if let engine = rows as? Store, !isClosed.load(ordering: .acquiring) {
            try? SharedEngineStores.shared.release(engine, closing: false)
        }
    }
}

/// Keys of the options a store is added with (Core Data's `NSPersistent…Key` strings where
/// Core Data has them).
public enum PersistentStoreOptionKey {
    /// `Bool`: keep persistent history (off by default, as in Core Data).
    public static let historyTracking = "NSPersistentHistoryTrackingKey"
    /// `Bool`: open without writing (`NSReadOnlyPersistentStoreOption`).
    public static let readOnly = "NSReadOnlyPersistentStoreOption"
    /// `Durability`: `.durable` (the default) or `.relaxed`.
    public static let durability = "StrataDurabilityOption"
    /// `Int`: bytes of decompressed blocks the store caches (the engine's default when absent).
    public static let cacheSize = "StrataCacheSizeOption"
}

/// How to add a store to a container (Core Data's `NSPersistentStoreDescription`). `Sendable`.
public struct PersistentStoreDescription: Sendable, CustomStringConvertible {
    /// Where the store lives.
    public var url: URL?
    /// The store's type. The default is `.strata`.
    public var type: PersistentStore.StoreType = .strata
    /// The model configuration (`nil`: every entity).
    public var configuration: String?
    /// Whether the store is opened read-only. The default is `false`.
    public var isReadOnly = false
    /// Whether `loadPersistentStores` adds the store on a background queue. The default is `false`.
    public var shouldAddStoreAsynchronously = false
    /// When a save returns. The default is `.durable`.
    public var durability: Durability = .durable
    /// Whether the store keeps persistent history. The default is `false`, as in Core Data.
    public var isHistoryTrackingEnabled = false
    /// Bytes of decompressed blocks the store caches; `nil` for the engine's default.
    public var cacheSize: Int?

    /// Creates a description of a store at `url`.
    public init(url: URL) { self.url = url }

    /// Creates a description without a URL (for an in-memory store, or to fill in later).
    public init() {}

    /// Sets an option by its Core Data key (``PersistentStoreOptionKey``).
    public mutating func setOption(_ value: (any Sendable)?, forKey key: String) {
        switch key {
        case PersistentStoreOptionKey.historyTracking: isHistoryTrackingEnabled = (value as? Bool) ?? false
        case PersistentStoreOptionKey.readOnly: isReadOnly = (value as? Bool) ?? false
        case PersistentStoreOptionKey.durability: durability = (value as? Durability) ?? .durable
        case PersistentStoreOptionKey.cacheSize: cacheSize = value as? Int
        default: break
        }
    }

    /// The type and URL.
    public var description: String { "<PersistentStoreDescription: type \(type.rawValue), url \(url?.path ?? "none")>" }
}
