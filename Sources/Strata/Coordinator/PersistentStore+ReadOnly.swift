import StrataStore

extension PersistentStore {
    /// Whether the store refuses saves (Core Data's `isReadOnly`): it was added with
    /// ``PersistentStoreDescription/isReadOnly``, or it was forced read-only because it kept
    /// persistent history and was added without ``PersistentHistoryTrackingKey`` (as Core Data
    /// does, with the same warning in the log). An in-memory store is writable.
    public var isReadOnly: Bool {
        engineStore?.configuration.readOnly ?? false
    }
}
