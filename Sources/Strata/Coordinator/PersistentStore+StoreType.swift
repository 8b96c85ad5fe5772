/// The type of Strata's durable on-disk store (Core Data's `NSSQLiteStoreType`). A port that
/// writes `NSSQLiteStoreType` without `NS` gets Strata's log-structured store directory, not
/// SQLite: Strata has one on-disk store type, and this is its name.
public let SQLiteStoreType = "SQLite"

/// Another name for ``SQLiteStoreType``: the same string, so a store added with either compares
/// equal to both.
public let StrataStoreType = SQLiteStoreType

/// The type of a store held in memory only (Core Data's `NSInMemoryStoreType`).
public let InMemoryStoreType = "InMemory"

extension PersistentStore {
    /// The kind of a persistent store (Core Data's `NSPersistentStore.StoreType`); its raw value is
    /// the store-type string (``SQLiteStoreType``, ``InMemoryStoreType``).
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type's name.
        public let rawValue: String
        /// Creates a type from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Strata's durable store directory (Core Data's `.sqlite`, which a port names).
        public static let sqlite = StoreType(rawValue: SQLiteStoreType)
        /// Strata's durable store directory: the same type as ``sqlite``.
        public static let strata = sqlite
        /// A store held in memory only.
        public static let inMemory = StoreType(rawValue: InMemoryStoreType)
    }
}
