/// A context's registered objects by ID, not retained (Core Data's uniquing table).
///
/// Most objects are found by the bits their ID hashes on (the primary key, or the temporary
/// identifier), which a store hands out from 1 up and a process from one counter: so the table
/// is an array of those bits, in pages of ``pageSize`` slots made when first used (see
/// ``groups``), each slot the address of the object registered there, unretained. Registering,
/// finding and removing an object is one slot's read or write, with no hashing and no probing;
/// objects fetched or made in a row fill neighbouring slots. Only a lookup that finds an object
/// in its slot reads it, to compare its ID. An object whose bits are past the pages' reach, or
/// whose slot holds another ID's object (one key in two stores or entity hierarchies), is kept
/// in ``overflow``, hashed. An object is registered under the ID it has: it is removed before
/// its ID changes (``ManagedObjectContext`` re-keys it) and when it is deallocated.
final class UniquingTable {
    /// The bits below this are an object's slot within its page.
    static let pageShift = 7
    /// The number of slots in a page.
    static let pageSize = 1 << pageShift
    /// The bits below this in a page number are the page's place in its group.
    static let groupShift = 9
    /// The number of pages in a group.
    static let groupSize = 1 << groupShift
    /// The number of groups: bits past `groupLimit * groupSize * pageSize` (2^24) are hashed.
    static let groupLimit = 1 << 8
    /// How many emptied pages are kept for reuse rather than freed.
    static let sparePageLimit = 256

    /// An entry of ``overflow``: the ID's bits and the object's address, unretained; for a
    /// lookup's probe, the address of the ID looked up with the lowest bit set.
    private struct Entry: Hashable {
        /// The ID's ``ManagedObjectID/hashBits``.
        let bits: UInt64
        /// The address of a registered object, or a probe's ID with the lowest bit set.
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
        var object: ManagedObject { UniquingTable.object(at: reference) }

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
            if reference & 1 != 0 {
                return Unmanaged<ManagedObjectID>.fromOpaque(address)._withUnsafeGuaranteedRef(body)
            }
            return Unmanaged<ManagedObject>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.objectID) }
        }
    }

    /// The pages, in groups of ``groupSize`` by page number (bits >> ``pageShift``): `nil` until
    /// the first page is made, then ``groupLimit`` groups, each `nil` until one of its pages is
    /// made, then ``groupSize`` pages, each `nil` where none is made. A page is ``pageSize``
    /// slots (an object's address, or 0) and then the number of its slots in use. Two levels, so
    /// that one object with a large key costs a group and a page (5 KiB), not an array of every
    /// page below it.
    // The table's state is `@exclusivity(unchecked)`, as a managed object's is: the table is
    // used on its context's queue only and no access overlaps another, and every registration,
    // lookup and removal (each fault and insert) reads it. The addresses it holds are safe to
    // read because an object leaves the table before it is freed or its ID changes.
    @exclusivity(unchecked) private var groups:
        UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>?>?
    /// Emptied pages (every slot 0) kept for reuse.
    @exclusivity(unchecked) private var sparePages: [UnsafeMutablePointer<UInt>] = []
    /// The objects not in a page's slot.
    @exclusivity(unchecked) private var overflow: Set<Entry> = []

    /// The number of registered objects.
    @exclusivity(unchecked) private(set) var count = 0

    /// An empty table.
    init() {}

    deinit {
        removeAll()
    }

    /// Forgets every object.
    func removeAll() {
        if let groups {
            for group in 0..<Self.groupLimit {
                guard let pages = groups[group] else { continue }
                for page in 0..<Self.groupSize { pages[page]?.deallocate() }
                pages.deallocate()
            }
            groups.deallocate()
            self.groups = nil
        }
        for page in sparePages { page.deallocate() }
        sparePages = []
        overflow = []
        count = 0
    }

    /// The object at `address`, not retained.
    private static func object(at address: UInt) -> ManagedObject {
        Unmanaged<ManagedObject>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
    }

    /// The page of `bits` and the slot in it, or `nil` when no page is made for them.
    @inline(__always)
    private func slot(_ bits: UInt64) -> UnsafeMutablePointer<UInt>? {
        let number = bits >> UInt64(Self.pageShift)
        let group = number >> UInt64(Self.groupShift)
        guard group < UInt64(Self.groupLimit), let groups, let pages = groups[Int(group)],
            let page = pages[Int(number & UInt64(Self.groupSize - 1))]
        else { return nil }
        return page + Int(bits & UInt64(Self.pageSize - 1))
    }

    /// The object registered under `id`, if any.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        let bits = id.hashBits
        if let slot = slot(bits), slot.pointee != 0 {
            let object = Self.object(at: slot.pointee)
            if object.objectID === id || object.objectID == id { return object }
        }
        guard !overflow.isEmpty else { return nil }
        return withExtendedLifetime(id) {
            guard let index = overflow.firstIndex(of: Entry(probe: id)) else { return nil }
            return overflow[index].object
        }
    }

    /// Registers `object` under its ID, in place of any object registered under it.
    func insert(_ object: ManagedObject) {
        let bits = object.objectID.hashBits
        let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        guard let slot = slot(bits) ?? makePage(for: bits) else {
            if overflow.update(with: Entry(object)) == nil { count += 1 }
            return
        }
        if slot.pointee == 0 {
            slot.pointee = address
            Self.pageUse(of: slot, bits: bits).pointee += 1
            count += 1
            // An object registered under the ID while the slot held another ID's is replaced.
            if !overflow.isEmpty, overflow.remove(Entry(object)) != nil { count -= 1 }
        } else if slot.pointee == address || Self.object(at: slot.pointee).objectID == object.objectID {
            slot.pointee = address
        } else if overflow.update(with: Entry(object)) == nil {
            count += 1
        }
    }

    /// Removes the entry of `object`'s ID when it is `object`'s.
    func remove(_ object: ManagedObject) {
        let bits = object.objectID.hashBits
        let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        if let slot = slot(bits), slot.pointee == address {
            slot.pointee = 0
            count -= 1
            let use = Self.pageUse(of: slot, bits: bits)
            use.pointee -= 1
            if use.pointee == 0 { retirePage(bits) }
            return
        }
        guard !overflow.isEmpty else { return }
        let entry = Entry(object)
        if let index = overflow.firstIndex(of: entry), overflow[index].reference == entry.reference {
            overflow.remove(at: index)
            count -= 1
        }
    }

    /// Every registered object.
    var objects: [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        if let groups {
            for group in 0..<Self.groupLimit {
                guard let pages = groups[group] else { continue }
                for number in 0..<Self.groupSize {
                    guard let page = pages[number] else { continue }
                    for slot in 0..<Self.pageSize where page[slot] != 0 { objects.append(Self.object(at: page[slot])) }
                }
            }
        }
        objects.append(contentsOf: overflow.lazy.map(\.object))
        return objects
    }

    /// The entry of ``groups`` holding the page of `bits`, made (with its group) when missing;
    /// `nil` when the bits are past the pages' reach.
    private func pageEntry(for bits: UInt64) -> UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>? {
        let number = bits >> UInt64(Self.pageShift)
        guard number >> UInt64(Self.groupShift) < UInt64(Self.groupLimit) else { return nil }
        let group = Int(number >> UInt64(Self.groupShift))
        let groups =
            self.groups
            ?? {
                let groups = UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>?>.allocate(
                    capacity: Self.groupLimit)
                groups.initialize(repeating: nil, count: Self.groupLimit)
                self.groups = groups
                return groups
            }()
        let pages =
            groups[group]
            ?? {
                let pages = UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>.allocate(capacity: Self.groupSize)
                pages.initialize(repeating: nil, count: Self.groupSize)
                groups[group] = pages
                return pages
            }()
        return pages + Int(number & UInt64(Self.groupSize - 1))
    }

    /// The count of used slots of the page whose slot for `bits` is `slot`.
    private static func pageUse(of slot: UnsafeMutablePointer<UInt>, bits: UInt64) -> UnsafeMutablePointer<UInt> {
        slot - Int(bits & UInt64(pageSize - 1)) + pageSize
    }

    /// Makes the page of `bits` and returns their slot, or returns `nil` when the bits are past
    /// the pages' reach.
    private func makePage(for bits: UInt64) -> UnsafeMutablePointer<UInt>? {
        guard let entry = pageEntry(for: bits) else { return nil }
        let page =
            sparePages.popLast()
            ?? {
                let page = UnsafeMutablePointer<UInt>.allocate(capacity: Self.pageSize + 1)
                page.initialize(repeating: 0, count: Self.pageSize + 1)
                return page
            }()
        entry.pointee = page
        return page + Int(bits & UInt64(Self.pageSize - 1))
    }

    /// Takes the emptied page of `bits` out of its group: kept for reuse, or freed.
    private func retirePage(_ bits: UInt64) {
        guard let entry = pageEntry(for: bits), let page = entry.pointee else { return }
        entry.pointee = nil
        if sparePages.count < Self.sparePageLimit { sparePages.append(page) } else { page.deallocate() }
    }
}
