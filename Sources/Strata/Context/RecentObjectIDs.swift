/// The permanent IDs of a context's objects freed most recently, by primary key: a fetch that
/// makes an object of a row the context had an object of a moment ago (the same request run
/// again, a list fetched anew) takes its ID from here instead of making one.
///
/// An ID made for a fetched object costs an allocation and two retains, and freeing it two
/// releases and a free, ~500 instructions an object (callgrind, strata-graph-bench W5's fetch of
/// the same 100 objects 50 times, 8% of each fetch); a lookup here is one slot's read and three
/// comparisons. IDs are immutable and name the same object in every context of a coordinator,
/// so handing one out again is what Core Data does with its own IDs.
///
/// Bounded: ``capacity`` slots, direct-mapped by key (an ID takes its slot from whatever ID held
/// it), made when the first ID is kept. Used on the context's queue only, as the uniquing table.
struct RecentObjectIDs {
    /// The number of slots; a power of two.
    static let capacity = 1024
    /// The IDs by key; empty until the first is kept.
    private var slots: [ManagedObjectID?] = []

    /// Keeps `id`, the ID of an object being freed that nothing else holds, unless it is
    /// temporary (no row has it).
    mutating func keep(_ id: ManagedObjectID) {
        guard !id.isTemporaryID else { return }
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.capacity) }
        slots[Self.slot(id.primaryKey)] = id
    }

    /// The kept ID of the object of `entity` with `primaryKey` in the store `storeIdentifier`,
    /// if one is kept.
    func id(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) -> ManagedObjectID? {
        guard !slots.isEmpty, let id = slots[Self.slot(primaryKey)], id.primaryKey == primaryKey, id.entity === entity,
            id.storeIdentifier == storeIdentifier
        else { return nil }
        return id
    }

    /// Forgets every kept ID.
    mutating func removeAll() {
        slots = []
    }

    /// The slot of the ID with `primaryKey`.
    private static func slot(_ primaryKey: Int64) -> Int {
        Int(truncatingIfNeeded: primaryKey) & (capacity - 1)
    }
}
