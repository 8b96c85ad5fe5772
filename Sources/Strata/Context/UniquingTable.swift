/// A context's registered objects by ID, not retained (Core Data's uniquing table).
///
/// An entry is the bits its object's ID hashes on (the primary key, or the temporary
/// identifier) and the object's address, unretained: 16 bytes, no reference counted, so that
/// registering and removing an object costs no atomic operation, and growing the table, and
/// the probes and moves of a removal, never read an object. Only a lookup that finds equal bits
/// reads the entry's object to compare its ID. An object is registered under the ID it has: it
/// is removed before its ID changes (``ManagedObjectContext`` re-keys it) and when it is
/// deallocated.
struct UniquingTable {
    private struct Entry: Hashable {
        /// The ID's ``ManagedObjectID/hashBits``.
        let bits: UInt64
        /// The address of a registered object; for a lookup's probe, of the ID looked up, with
        /// the lowest bit set. Neither is retained.
        let reference: UInt

        /// The entry of `object`, under its current ID.
        init(_ object: ManagedObject) {
            bits = object.objectID.hashBits
            reference = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        }

        /// The probe of a lookup of `id`; valid while the caller holds `id`.
        init(probe id: ManagedObjectID) {
            bits = id.hashBits
            reference = UInt(bitPattern: Unmanaged.passUnretained(id).toOpaque()) | 1
        }

        /// The registered object (not a probe's).
        var object: ManagedObject {
            Unmanaged<ManagedObject>.fromOpaque(UnsafeRawPointer(bitPattern: reference)!).takeUnretainedValue()
        }

        /// Whether the two entries name one ID: the same bits, and the same object or equal IDs.
        static func == (lhs: Entry, rhs: Entry) -> Bool {
            guard lhs.bits == rhs.bits else { return false }
            return lhs.reference == rhs.reference || lhs.withID { left in rhs.withID { right in left == right } }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(bits) }

        /// The table's hash: the bits grouped with the table's seed (``HashMixing/grouped(_:seed:)``),
        /// so that objects made or fetched in a row take neighbouring buckets.
        func _rawHashValue(seed: Int) -> Int { HashMixing.grouped(bits, seed: seed) }

        /// Calls `body` with the ID the entry names, borrowed (no reference counted).
        private func withID<Result>(_ body: (ManagedObjectID) -> Result) -> Result {
            let address = UnsafeRawPointer(bitPattern: reference & ~1)!
            if reference & 1 != 0 { return Unmanaged<ManagedObjectID>.fromOpaque(address)._withUnsafeGuaranteedRef(body) }
            return Unmanaged<ManagedObject>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.objectID) }
        }
    }

    private var entries: Set<Entry> = []

    /// An empty table.
    init() {}

    /// The object registered under `id`, if any.
    ///
    /// A mutating getter, so that the context's table is read in place: a plain getter of a
    /// class's stored table copies it, which retains and releases its storage (two atomic
    /// operations a lookup).
    subscript(id: ManagedObjectID) -> ManagedObject? {
        mutating get {
            withExtendedLifetime(id) {
                guard let index = entries.firstIndex(of: Entry(probe: id)) else { return nil }
                return entries[index].object
            }
        }
    }

    /// Registers `object` under its ID, in place of any object registered under it.
    mutating func insert(_ object: ManagedObject) {
        entries.update(with: Entry(object))
    }

    /// Every registered object.
    var objects: some Collection<ManagedObject> { entries.lazy.map(\.object) }

    /// The number of entries.
    var count: Int { entries.count }

    /// Makes room for `capacity` entries in all.
    mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }

    /// Removes the entry of `object`'s ID when it is `object`'s, with one lookup.
    mutating func remove(_ object: ManagedObject) {
        let entry = Entry(object)
        if let index = entries.firstIndex(of: entry), entries[index].reference == entry.reference {
            entries.remove(at: index)
        }
    }
}
