import Foundation

/// How to add a store to a coordinator or container (Core Data's `NSPersistentStoreDescription`).
///
/// A class, as in Core Data: `container.persistentStoreDescriptions.first?.setOption(...)`
/// changes the description the container loads. Every option set is kept in ``options``;
/// the properties ``isReadOnly``, ``timeout``, ``shouldMigrateStoreAutomatically``,
/// ``shouldInferMappingModelAutomatically`` and ``sqlitePragmas`` read and write their options.
// @unchecked: every property is kept behind the lock (a mutex cannot hold the non-Sendable option values).
open class PersistentStoreDescription: NSObject, NSCopying, @unchecked Sendable {
    private struct State {
        var type = SQLiteStoreType
        var configuration: String?
        var url: URL?
        var options: [String: Any] = [
            MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true,
        ]
        var shouldAddStoreAsynchronously = false
    }

    private let lock = NSLock()
    private var current = State()

    /// Runs `body` on the properties, under the lock.
    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&current)
    }

    /// Creates a description of a store without a URL (for an in-memory store, or to fill in later).
    public override init() {}

    /// Creates a description of a store at `url`.
    public convenience init(url: URL) {
        self.init()
        self.url = url
    }

    /// The store's type: ``SQLiteStoreType`` (Strata's store directory, the default) or
    /// ``InMemoryStoreType``.
    public var type: String {
        get { withState { $0.type } }
        set { withState { $0.type = newValue } }
    }

    /// The model configuration whose entities the store holds (`nil`: every entity).
    public var configuration: String? {
        get { withState { $0.configuration } }
        set { withState { $0.configuration = newValue } }
    }

    /// Where the store lives (a `Name.strata` directory).
    public var url: URL? {
        get { withState { $0.url } }
        set { withState { $0.url = newValue } }
    }

    /// Every option set, by key, including keys Strata does not use.
    public var options: [String: Any] { withState { $0.options } }

    /// Sets the option `key` to `option`, or removes it for `nil`. Options are read when the
    /// store is added.
    public func setOption(_ option: Any?, forKey key: String) {
        withState { $0.options[key] = option }
    }

    /// Whether `loadPersistentStores` adds the store on a background queue. The default is `false`.
    public var shouldAddStoreAsynchronously: Bool {
        get { withState { $0.shouldAddStoreAsynchronously } }
        set { withState { $0.shouldAddStoreAsynchronously = newValue } }
    }

    /// Whether the store is opened read-only (``ReadOnlyPersistentStoreOption``). The default is `false`.
    public var isReadOnly: Bool {
        get { Self.flag(options[ReadOnlyPersistentStoreOption]) ?? false }
        set { setOption(newValue, forKey: ReadOnlyPersistentStoreOption) }
    }

    /// Seconds to wait for a locked store (``PersistentStoreTimeoutOption``). The default is 240.
    /// Kept only: a store another process holds open is refused at once.
    public var timeout: TimeInterval {
        get { Self.number(options[PersistentStoreTimeoutOption])?.doubleValue ?? 240 }
        set { setOption(newValue, forKey: PersistentStoreTimeoutOption) }
    }

    /// Whether to migrate the store to the current model
    /// (``MigratePersistentStoresAutomaticallyOption``). The default is `true`.
    public var shouldMigrateStoreAutomatically: Bool {
        get { Self.flag(options[MigratePersistentStoresAutomaticallyOption]) ?? false }
        set { setOption(newValue, forKey: MigratePersistentStoresAutomaticallyOption) }
    }

    /// Whether to infer a mapping model when migrating (``InferMappingModelAutomaticallyOption``).
    /// The default is `true`.
    public var shouldInferMappingModelAutomatically: Bool {
        get { Self.flag(options[InferMappingModelAutomaticallyOption]) ?? false }
        set { setOption(newValue, forKey: InferMappingModelAutomaticallyOption) }
    }

    /// The SQLite pragmas set with ``setValue(_:forPragmaNamed:)`` (kept in ``SQLitePragmasOption``).
    /// `synchronous` set to `OFF` selects relaxed durability; the others are kept only.
    public var sqlitePragmas: [String: Any] { options[SQLitePragmasOption] as? [String: Any] ?? [:] }

    /// Sets the SQLite pragma `name` to `value`, or removes it for `nil`.
    public func setValue(_ value: Any?, forPragmaNamed name: String) {
        withState { state in
            var pragmas = state.options[SQLitePragmasOption] as? [String: Any] ?? [:]
            pragmas[name] = value
            state.options[SQLitePragmasOption] = pragmas
        }
    }

    /// Whether the store keeps persistent history (``PersistentHistoryTrackingKey``). The
    /// default is `false`, as in Core Data.
    public var isHistoryTrackingEnabled: Bool {
        get { Self.flag(options[PersistentHistoryTrackingKey]) ?? false }
        set { setOption(newValue, forKey: PersistentHistoryTrackingKey) }
    }

    /// Bytes of decompressed blocks the store caches (``PersistentStoreOptionKey/cacheSize``);
    /// `nil` for the engine's default.
    public var cacheSize: Int? {
        get { Self.number(options[PersistentStoreOptionKey.cacheSize])?.intValue }
        set { setOption(newValue, forKey: PersistentStoreOptionKey.cacheSize) }
    }

    /// Whether the store loads its newest blocks into its cache in the background once opened,
    /// so that the first faults and fetches find them decoded
    /// (``PersistentStoreOptionKey/warmsCacheAfterOpening``). The default is `true`.
    public var warmsCacheAfterOpening: Bool {
        get { Self.flag(options[PersistentStoreOptionKey.warmsCacheAfterOpening]) ?? true }
        set { setOption(newValue, forKey: PersistentStoreOptionKey.warmsCacheAfterOpening) }
    }

    /// The type of store to open: ``type``, except that a store at `/dev/null` (Core Data's
    /// idiom for a throwaway SQLite store in tests) is held in memory.
    var typeToOpen: String {
        let state = withState { $0 }
        return state.type == SQLiteStoreType && state.url?.path == "/dev/null" ? InMemoryStoreType : state.type
    }

    /// A description with the same type, configuration, URL and options.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = PersistentStoreDescription()
        let state = withState { $0 }
        copy.withState { $0 = state }
        return copy
    }

    /// The type, configuration, URL and options.
    open override var description: String {
        let state = withState { $0 }
        let options = state.options.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        return
            "<PersistentStoreDescription: type \(state.type), configuration \(state.configuration ?? "default"), url \(state.url?.path ?? "none"), options [\(options)]>"
    }

    /// A Boolean option given as `Bool`, `NSNumber` or a string (`YES`, `true`, `1`).
    static func flag(_ value: Any?) -> Bool? {
        if let number = number(value) { return number.boolValue }
        if let string = value as? String { return ["yes", "true", "1"].contains(string.lowercased()) }
        return nil
    }

    /// A numeric option given as a Swift number or `NSNumber`.
    static func number(_ value: Any?) -> NSNumber? {
        switch value {
        case let number as NSNumber: number
        case let value as Bool: NSNumber(value: value)
        case let value as Int: NSNumber(value: value)
        case let value as Double: NSNumber(value: value)
        default: nil
        }
    }
}
