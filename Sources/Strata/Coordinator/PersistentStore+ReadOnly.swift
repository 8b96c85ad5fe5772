import Synchronization

extension PersistentStore {
    /// Whether the store refuses saves (Core Data's `isReadOnly`): it was added with
    /// ``PersistentStoreDescription/isReadOnly``, it was forced read-only because it kept
    /// persistent history and was added without ``PersistentHistoryTrackingKey`` (as Core Data
    /// does, with the same warning in the log), or the application set it.
    ///
    /// Setting it to `true` makes saves into the store fail (a context's `save()` with
    /// `persistentStoreSave`, a batch request or a history replay with
    /// `persistentStoreOperation`), changing nothing and keeping the context's changes; setting
    /// it back to `false` lets them through again. A store added read-only stays read-only
    /// whatever is set: its engine store was opened without the writer's lock. An in-memory
    /// store is writable until set read-only.
    public var isReadOnly: Bool {
        get { markedReadOnly.load(ordering: .acquiring) || isOpenedReadOnly }
        set { markedReadOnly.store(newValue, ordering: .releasing) }
    }
}
