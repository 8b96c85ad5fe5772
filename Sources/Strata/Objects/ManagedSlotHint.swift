import Synchronization

/// The slot a `@Managed` property was last found at, which the `@Managed` macro keeps in a
/// static property of the property's declaration type and passes to the accessors: while the
/// slot still holds the property's name (the same entity, or one that lays the property out at
/// the same slot) the accessor uses it without looking the name up. Not meant to be used by hand.
public final class _ManagedSlotHint: Sendable {
    /// The slot last found, or -1.
    private let slot = Atomic<Int>(-1)

    /// Creates a hint that holds no slot yet.
    public init() {}

    /// The slot of `key` in `runtime`: the hinted one when it is `key`'s, else looked up by name
    /// (and kept as the next hint).
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when the entity has no property `key`.
    func slot(of key: String, in runtime: EntityRuntime) throws -> Int {
        let hinted = slot.load(ordering: .relaxed)
        if hinted >= 0, hinted < runtime.names.count, runtime.names[hinted] == key { return hinted }
        let found = try runtime.slot(key)
        slot.store(found, ordering: .relaxed)
        return found
    }
}
