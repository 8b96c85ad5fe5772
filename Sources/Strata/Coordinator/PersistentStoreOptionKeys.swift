// The option keys of Core Data's `NSPersistentStoreCoordinator`, with `NS` dropped and Core
// Data's string values. A description keeps every option it is given, these and any other.

/// `Bool`: keep persistent history (off by default, as in Core Data). Honoured.
public let PersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// `Bool`: post ``Foundation/Notification/Name/PersistentStoreRemoteChange`` after each save. Honoured.
public let PersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// `Bool`: migrate the store to the current model version (default `true` in a description).
/// Honoured: lightweight migration when the store is added.
public let MigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// `Bool`: infer a mapping model when migrating (default `true` in a description). Honoured.
public let InferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// `Bool`: open the store without writing. Honoured.
public let ReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// The file protection class of the store's files. Kept and ignored: Linux has no file protection.
public let PersistentStoreFileProtectionKey = "NSPersistentStoreFileProtectionKey"
/// `TimeInterval`: how long to wait for a locked store (default 240 seconds). Kept; a store
/// locked by another process is refused at once.
public let PersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// `[String: Any]`: SQLite pragmas (``PersistentStoreDescription/sqlitePragmas``). Kept;
/// `synchronous` set to `OFF` selects relaxed durability.
public let SQLitePragmasOption = "NSSQLitePragmasOption"
/// `Bool`: run SQLite's `ANALYZE` when opening. Kept; Strata keeps no query statistics.
public let SQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"
/// `Bool`: vacuum the SQLite file when opening. Kept; Strata compacts in the background.
public let SQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"
/// `Bool`: skip the model version check (no migration); a store written with another layout is
/// still refused by the engine. Honoured.
public let IgnorePersistentStoreVersioningOption = "NSIgnorePersistentStoreVersioningOption"
/// `Int`: the most connections SQLite opens. Kept; a Strata store is one engine per process.
public let PersistentStoreConnectionPoolMaxSizeKey = "NSPersistentStoreConnectionPoolMaxSizeKey"

/// Keys of the options a store is added with: Core Data's keys under Strata's older names, and
/// Strata's own.
public enum PersistentStoreOptionKey {
    /// ``PersistentHistoryTrackingKey``.
    public static let historyTracking = PersistentHistoryTrackingKey
    /// ``ReadOnlyPersistentStoreOption``.
    public static let readOnly = ReadOnlyPersistentStoreOption
    /// `Durability`: `.durable` (the default) or `.relaxed` (or their names as strings).
    public static let durability = "StrataDurabilityOption"
    /// `Int`: bytes of decompressed blocks the store caches (the engine's default when absent).
    public static let cacheSize = "StrataCacheSizeOption"
    /// `Bool`: whether the store loads its newest blocks into its cache in the background once
    /// opened (`true` when absent).
    public static let warmsCacheAfterOpening = "StrataWarmsCacheAfterOpeningOption"
    /// `Int`: the most threads one large save spreads its work over (the engine's
    /// `StoreConfiguration.commitThreads`: the active cores, at most 4, when absent; 1 keeps
    /// every save on its context's queue).
    public static let commitThreads = "StrataCommitThreadsOption"
}
