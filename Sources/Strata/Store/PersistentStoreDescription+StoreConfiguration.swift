import Foundation
public import StrataStore

extension PersistentStoreDescription {
    /// When a save returns (``PersistentStoreOptionKey/durability``): `.durable` (the default)
    /// or `.relaxed`; the pragma `synchronous = OFF` also selects `.relaxed`.
    public var durability: Durability {
        get {
            switch options[PersistentStoreOptionKey.durability] {
            case let durability as Durability: return durability
            case let name as String: return name.lowercased() == "relaxed" ? .relaxed : .durable
            default:
                let synchronous = sqlitePragmas["synchronous"].map { "\($0)".uppercased() }
                return synchronous == "OFF" || synchronous == "0" ? .relaxed : .durable
            }
        }
        set { setOption(newValue, forKey: PersistentStoreOptionKey.durability) }
    }

    /// The engine configuration the options select.
    var storeConfiguration: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = durability
        configuration.historyTracking = isHistoryTrackingEnabled
        configuration.historyTrackingFollowsConfiguration = true
        configuration.readOnly = isReadOnly
        if let cacheSize { configuration.cacheSize = cacheSize }
        configuration.warmsCacheAfterOpening = warmsCacheAfterOpening
        if let threads = Self.number(options[PersistentStoreOptionKey.commitThreads])?.intValue {
            configuration.commitThreads = max(1, threads)
        }
        configuration.historyConsumerLagLimit = Self.number(options[HistoryConsumerLagLimitKey])?.intValue
        configuration.historyConsumerAgeLimit = Self.number(options[HistoryConsumerAgeLimitKey])?.doubleValue
        return configuration
    }
}
