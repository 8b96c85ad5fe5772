/// A context's registered objects by ID, not retained (Core Data's uniquing table).
///
/// Keys keep the bits IDs hash on (the primary key, or the temporary identifier) next to the ID,
/// so that growing the table, and the probes and moves of a removal, never read the ID objects
/// themselves: only a lookup that finds equal bits compares the IDs.
struct UniquingTable: ExpressibleByDictionaryLiteral {
    private struct StoredKey: Hashable {
        let bits: UInt64
        let id: ManagedObjectID

        init(_ id: ManagedObjectID) {
            bits = id.hashBits
            self.id = id
        }

        static func == (lhs: StoredKey, rhs: StoredKey) -> Bool { lhs.bits == rhs.bits && lhs.id == rhs.id }

        func hash(into hasher: inout Hasher) { hasher.combine(bits) }

        /// The table's hash: the bits grouped with the table's seed (``HashMixing/grouped(_:seed:)``),
        /// so that objects made or fetched in a row take neighbouring buckets.
        func _rawHashValue(seed: Int) -> Int { HashMixing.grouped(bits, seed: seed) }
    }

    private var entries: [StoredKey: RegisteredObject] = [:]

    /// An empty table (`[:]`); the table takes no other literal.
    init(dictionaryLiteral elements: (ManagedObjectID, RegisteredObject)...) {
        for (id, entry) in elements { entries[StoredKey(id)] = entry }
    }

    /// The entry of `id`, if any; setting `nil` removes it.
    subscript(id: ManagedObjectID) -> RegisteredObject? {
        get { entries[StoredKey(id)] }
        set { entries[StoredKey(id)] = newValue }
    }

    /// Every entry.
    var values: some Collection<RegisteredObject> { entries.values }

    /// The number of entries.
    var count: Int { entries.count }

    /// Makes room for `capacity` entries in all.
    mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }

    /// Removes the entry of `object`'s ID when it is `object`'s, with one lookup.
    mutating func remove(_ object: ManagedObject) {
        // `values[index]`, not `entries[index].value`, which would copy (and retain) the key too.
        if let index = entries.index(forKey: StoredKey(object.objectID)), entries.values[index].object === object {
            entries.remove(at: index)
        }
    }
}
