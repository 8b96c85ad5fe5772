import Synchronization

/// Hands out the primary keys of a store that shares its key space with other stores (a replica
/// of a dataset written in several places), in place of the store's own counter.
///
/// The source is responsible for never handing out a key twice across the stores sharing the
/// key space; the store's counter moves past every range the source hands out.
public protocol KeySource: AnyObject, Sendable {
    /// Returns `count` consecutive keys for new rows of `entity`, or `nil` to take them from the
    /// store's counter. Called under the store's key lock: do not call back into the store.
    ///
    /// - Parameters:
    ///   - entity: the engine entity.
    ///   - count: how many keys (at least 1).
    ///   - next: the first key the store's counter would hand out.
    /// - Returns: the keys, or `nil` for the counter's.
    func allocateKeys(for entity: Int, count: Int, next: PrimaryKey) -> ClosedRange<PrimaryKey>?
}

extension Store {
    /// Where ``allocateKeys(for:count:)`` takes keys from first (`nil`: the store's own counter).
    public var keySource: (any KeySource)? {
        get { keySourceSlot.withLock { $0 } }
        set { keySourceSlot.withLock { $0 = newValue } }
    }
}
