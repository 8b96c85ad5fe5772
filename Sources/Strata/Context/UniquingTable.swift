/// A context's registered objects by ID, not retained (Core Data's uniquing table).
///
/// Most objects are found by the bits their ID hashes on (the primary key, or the temporary
/// identifier), which a store hands out from 1 up and a process from one counter: so the table
/// is an array of those bits, in pages of ``pageSize`` slots made when first used, each slot the
/// address of the object registered there, unretained. Registering, finding and removing an
/// object is one slot's read or write, with no hashing and no probing; objects fetched or made
/// in a row fill neighbouring slots. Only a lookup that finds an object in its slot reads it, to
/// compare its ID. An object whose bits are past the pages' reach, or whose slot holds another
/// ID's object (one key in two stores or entity hierarchies), is kept in ``overflow``, hashed.
/// An object is registered under the ID it has: it is removed before its ID changes
/// (``ManagedObjectContext`` re-keys it) and when it is deallocated.
final class UniquingTable {
    /// The bits below this are an object's slot within its page.
    static let pageShift = 7
    /// The number of slots in a page.
    static let pageSize = 1 << pageShift
    /// The number of pages the table can have: bits past `pageLimit * pageSize` are hashed.
    static let pageLimit = 1 << 17
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

        /// Calls `body` with the ID the entry names, borrowed (no reference counted).
        private func withID<Result>(_ body: (ManagedObjectID) -> Result) -> Result {
            let address = UnsafeRawPointer(bitPattern: reference & ~1)!
            if reference & 1 != 0 { return Unmanaged<ManagedObjectID>.fromOpaque(address)._withUnsafeGuaranteedRef(body) }
            return Unmanaged<ManagedObject>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.objectID) }
        }
    }

    /// The pages by number (bits >> ``pageShift``), `nil` where none is made: each page
    /// ``pageSize`` slots (an object's address, or 0) and then the number of its slots in use.
    @exclusivity(unchecked) private var pages: UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>
    /// The number of entries of ``pages``.
    private var pageCapacity = 0
    /// Emptied pages (every slot 0) kept for reuse.
    @exclusivity(unchecked) private var sparePages: [UnsafeMutablePointer<UInt>] = []
    /// The objects not in a page's slot.
    @exclusivity(unchecked) private var overflow: Set<Entry> = []

    /// The number of registered objects.
    private(set) var count = 0

    /// An empty table.
    init() {
        pages = .allocate(capacity: 0)
    }

    deinit {
        removeAll()
        pages.deallocate()
    }

    /// Forgets every object.
    func removeAll() {
        for number in 0..<pageCapacity { pages[number]?.deallocate() }
        pages.deinitialize(count: pageCapacity)
        pageCapacity = 0
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
        guard number < UInt64(pageCapacity), let page = pages[Int(number)] else { return nil }
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
            pageUse(of: bits).pointee += 1
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
            let use = pageUse(of: bits)
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
        for number in 0..<pageCapacity {
            guard let page = pages[number] else { continue }
            for slot in 0..<Self.pageSize where page[slot] != 0 { objects.append(Self.object(at: page[slot])) }
        }
        objects.append(contentsOf: overflow.lazy.map(\.object))
        return objects
    }

    /// The count of used slots of the page of `bits` (which is made).
    private func pageUse(of bits: UInt64) -> UnsafeMutablePointer<UInt> {
        pages[Int(bits >> UInt64(Self.pageShift))]! + Self.pageSize
    }

    /// Makes the page of `bits` (growing ``pages`` when needed) and returns their slot, or
    /// returns `nil` when the bits are past the pages' reach.
    private func makePage(for bits: UInt64) -> UnsafeMutablePointer<UInt>? {
        let number = bits >> UInt64(Self.pageShift)
        guard number < UInt64(Self.pageLimit) else { return nil }
        if Int(number) >= pageCapacity {
            let capacity = min(Self.pageLimit, max(Int(number) + 1, pageCapacity * 2, 64))
            let grown = UnsafeMutablePointer<UnsafeMutablePointer<UInt>?>.allocate(capacity: capacity)
            grown.moveInitialize(from: pages, count: pageCapacity)
            (grown + pageCapacity).initialize(repeating: nil, count: capacity - pageCapacity)
            pages.deallocate()
            pages = grown
            pageCapacity = capacity
        }
        let page = sparePages.popLast() ?? {
            let page = UnsafeMutablePointer<UInt>.allocate(capacity: Self.pageSize + 1)
            page.initialize(repeating: 0, count: Self.pageSize + 1)
            return page
        }()
        pages[Int(number)] = page
        return page + Int(bits & UInt64(Self.pageSize - 1))
    }

    /// Takes the emptied page of `bits` out of ``pages``: kept for reuse, or freed.
    private func retirePage(_ bits: UInt64) {
        let number = Int(bits >> UInt64(Self.pageShift))
        guard let page = pages[number] else { return }
        pages[number] = nil
        if sparePages.count < Self.sparePageLimit { sparePages.append(page) } else { page.deallocate() }
    }
}
