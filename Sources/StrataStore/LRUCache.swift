internal import CStrataSupport
import StrataSynchronization
import Synchronization

/// A thread-safe cache keyed by `UInt64` that keeps at most `capacity` bytes of elements and
/// evicts the least recently used ones first.
///
/// Entries live in an array of slots linked into a doubly linked list, most recently used first,
/// with a dictionary from key to slot, so every operation is O(1) without allocating per entry.
///
/// An element may be cached with an address its readers read from next (``insert(_:forKey:cost:readAt:)``):
/// a lookup naming an offset from it starts loading that memory before it takes its reference
/// to the element, so that the two cache misses (the element's reference count, the bytes) are
/// waited for at once rather than one after the other.
final class LRUCache<Element: Sendable>: Sendable {
    /// One slot of the recency list.
    private struct Slot {
        /// The key the slot holds.
        var key: UInt64
        /// The cached element, `nil` while the slot is free.
        var element: Element?
        /// The cost the element was inserted with.
        var cost: Int
        /// The more recently used neighbour, or `none`.
        var previous: Int
        /// The less recently used neighbour, or `none`.
        var next: Int
        /// The address the element's readers read from (0 when none), for prefetching only:
        /// never read through, so kept as a number.
        var readAt: UInt
    }

    /// The cache contents and statistics, guarded by ``state``.
    private struct State {
        /// The slot of each cached key.
        var slotsByKey: [TableKey: Int] = [:]
        /// Every slot ever used; free ones are listed in ``freeSlots``.
        var slots: [Slot] = []
        /// Indices of unused slots in ``slots``.
        var freeSlots: [Int] = []
        /// The most recently used slot, or `none`.
        var head = LRUCache.none
        /// The least recently used slot, or `none`.
        var tail = LRUCache.none
        /// The sum of the costs of the cached elements.
        var totalCost = 0
        /// The number of lookups that found their key.
        var hits = 0
        /// The number of lookups that did not find their key.
        var misses = 0

        /// Takes `slot` out of the recency list.
        mutating func unlink(_ slot: Int) {
            let previous = slots[slot].previous
            let next = slots[slot].next
            if previous == LRUCache.none { head = next } else { slots[previous].next = next }
            if next == LRUCache.none { tail = previous } else { slots[next].previous = previous }
        }

        /// Puts `slot` at the most recently used end of the list.
        mutating func pushFront(_ slot: Int) {
            slots[slot].previous = LRUCache.none
            slots[slot].next = head
            if head == LRUCache.none { tail = slot } else { slots[head].previous = slot }
            head = slot
        }

        /// Puts `slot` at the least recently used end of the list.
        mutating func pushBack(_ slot: Int) {
            slots[slot].next = LRUCache.none
            slots[slot].previous = tail
            if tail == LRUCache.none { head = slot } else { slots[tail].next = slot }
            tail = slot
        }

        /// Keeps `value` under `key` in a free (or new) slot, not yet linked into the recency
        /// list; returns the slot.
        mutating func add(_ value: Element, forKey key: UInt64, cost: Int, readAt: UInt) -> Int {
            let entry = Slot(
                key: key, element: value, cost: cost, previous: LRUCache.none, next: LRUCache.none, readAt: readAt)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = entry
            } else {
                slot = slots.count
                slots.append(entry)
            }
            slotsByKey[TableKey(value: key)] = slot
            totalCost += cost
            return slot
        }

        /// Drops the entry in `slot` and frees the slot.
        mutating func remove(slot: Int) {
            unlink(slot)
            slotsByKey[TableKey(value: slots[slot].key)] = nil
            totalCost -= slots[slot].cost
            slots[slot].element = nil
            freeSlots.append(slot)
        }
    }

    /// The marker for "no slot" in the list links.
    private static var none: Int { -1 }

    /// The most bytes the cached elements may cost together.
    let capacity: Int

    /// The cache contents, behind one lock.
    private let state = Lock(State())

    /// Creates an empty cache holding at most `capacity` bytes; a capacity of 0 caches nothing.
    init(capacity: Int) {
        precondition(capacity >= 0, "LRUCache capacity must not be negative")
        self.capacity = capacity
    }

    /// The element cached under `key`, marked most recently used; counts a hit or a miss. With
    /// `prefetching`, the memory that far past the element's read address (when it was cached
    /// with one) starts loading first.
    func value(forKey key: UInt64, prefetching offset: Int? = nil) -> Element? {
        state.withLock { state in
            guard let slot = state.slotsByKey[TableKey(value: key)] else {
                state.misses += 1
                return nil
            }
            if let offset, let address = UnsafeRawPointer(bitPattern: state.slots[slot].readAt) {
                strata_prefetch(address + offset)
            }
            state.hits += 1
            if slot != state.head {
                state.unlink(slot)
                state.pushFront(slot)
            }
            return state.slots[slot].element
        }
    }

    /// Caches `value` under `key` as the most recently used element, replacing any element
    /// already there, then evicts least recently used elements until the total cost fits the
    /// capacity. An element costing more than the capacity is not kept. `readAt` is where its
    /// readers read from (see ``value(forKey:prefetching:)``).
    func insert(_ value: Element, forKey key: UInt64, cost: Int, readAt: UnsafeRawPointer? = nil) {
        precondition(cost >= 0, "LRUCache cost must not be negative")
        let readAt = UInt(bitPattern: readAt)
        state.withLock { state in
            if let old = state.slotsByKey[TableKey(value: key)] { state.remove(slot: old) }
            guard cost <= capacity, capacity > 0 else { return }
            state.pushFront(state.add(value, forKey: key, cost: cost, readAt: readAt))
            while state.totalCost > capacity { state.remove(slot: state.tail) }
        }
    }

    /// Caches `value` under `key` when the cache has room for it without evicting anything and
    /// holds nothing under `key`, as the least recently used element: blocks a scan reads, and
    /// the blocks a commit just wrote, fill free room, and are the first evicted when elements
    /// inserted with ``insert(_:forKey:cost:readAt:)`` need it, unless they are looked up again
    /// first. `readAt` is as ``insert(_:forKey:cost:readAt:)`` takes it.
    ///
    /// - Returns: `false` when the cache had no room for `value` (whether or not it holds an
    ///   element under `key`).
    @discardableResult
    func insertIfRoom(_ value: Element, forKey key: UInt64, cost: Int, readAt: UnsafeRawPointer? = nil) -> Bool {
        precondition(cost >= 0, "LRUCache cost must not be negative")
        let readAt = UInt(bitPattern: readAt)
        return state.withLock { state in
            guard state.totalCost + cost <= capacity, capacity > 0 else { return false }
            guard state.slotsByKey[TableKey(value: key)] == nil else { return true }
            state.pushBack(state.add(value, forKey: key, cost: cost, readAt: readAt))
            return true
        }
    }

    /// Whether an element is cached under `key`; neither a use nor a lookup the statistics count.
    func contains(_ key: UInt64) -> Bool {
        state.withLock { $0.slotsByKey[TableKey(value: key)] != nil }
    }

    /// The cost the cache can still take without evicting anything.
    var freeRoom: Int {
        state.withLock { capacity - $0.totalCost }
    }

    /// Drops the element cached under `key`, if any.
    func removeValue(forKey key: UInt64) {
        state.withLock { state in
            if let slot = state.slotsByKey[TableKey(value: key)] { state.remove(slot: slot) }
        }
    }

    /// Drops every cached element; the hit and miss counts are kept.
    func removeAll() {
        state.withLock { state in
            state.slotsByKey.removeAll()
            state.slots.removeAll()
            state.freeSlots.removeAll()
            state.head = Self.none
            state.tail = Self.none
            state.totalCost = 0
        }
    }

    /// The number of lookups that found their key.
    var hits: Int { state.withLock { $0.hits } }

    /// The number of lookups that did not find their key.
    var misses: Int { state.withLock { $0.misses } }

    /// The sum of the costs of the cached elements, at most ``capacity``.
    var totalCost: Int { state.withLock { $0.totalCost } }

    /// The number of cached elements.
    var count: Int { state.withLock { $0.slotsByKey.count } }
}
