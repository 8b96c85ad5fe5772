/// The object index of one entity: from primary key to row location, and the encoded size of
/// each live row (for exact dead-byte counts). 12 bytes a key, in pages of 4,096 keys
/// (``IndexPage``) that copies of the index share until one of them writes; a page whose keys
/// all lost their rows takes no memory (``IndexPage/vacant``), so a workload that creates and
/// deletes keeps memory for its live rows' pages only.
///
/// An index opened from a checkpoint starts with pages not yet read: a lookup in one reads and
/// verifies it first, and can throw. Writers call ``prepare(_:)`` for every key they will set
/// before they commit to setting it, so that ``set(_:to:size:)`` itself cannot fail.
struct EntityIndex: Sendable {
    /// The largest key (or next key) a file may name. Keys count rows from 1 into this dense
    /// index of 12 bytes a key, so `1 << 62` is never reached: a larger one is damage, and
    /// refusing it keeps `key + 1` and the allocation of keys after it from overflowing.
    static let maximumKey: Int64 = 1 << 62

    /// The pages; key `k` is in page `k >> IndexPage.shift`.
    private(set) var pages: [IndexPage] = []
    /// The number of live rows.
    var liveCount = 0

    /// An empty index.
    init() {}

    /// An index of `pages` holding `liveCount` live rows (a checkpoint's).
    init(pages: [IndexPage], liveCount: Int) {
        self.pages = pages
        self.liveCount = liveCount
    }

    /// One past the largest key the pages can hold: every key at or above it is absent.
    var keyLimit: Int64 { Int64(pages.count) << IndexPage.shift }

    /// The page and slot of `key`, or `nil` when no page holds it.
    @inline(__always)
    private func page(of key: Int64) -> (page: IndexPage, slot: Int)? {
        guard key > 0, key < keyLimit else { return nil }
        return (pages[Int(key >> IndexPage.shift)], Int(key) & (IndexPage.capacity - 1))
    }

    /// The location of `key`'s row, or `.absent`.
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` when `key`'s page is a checkpoint's that cannot
    ///   be read or fails its verification.
    func location(of key: Int64) throws -> RowLocation {
        guard let (page, slot) = page(of: key) else { return .absent }
        return RowLocation(raw: try page.location(slot))
    }

    /// The encoded size of `key`'s row.
    ///
    /// - Throws: as ``location(of:)``.
    func size(of key: Int64) throws -> Int {
        guard let (page, slot) = page(of: key) else { return 0 }
        return Int(try page.size(slot))
    }

    /// Reads `key`'s page if it is a checkpoint's not yet read.
    ///
    /// - Throws: as ``location(of:)``.
    func prepare(_ key: Int64) throws {
        try page(of: key)?.page.prepare()
    }

    /// Sets `key`'s location and size, adding pages as needed; returns the previous location.
    /// `key`'s page must have been prepared (``prepare(_:)``, or a lookup).
    @discardableResult
    mutating func set(_ key: Int64, to location: RowLocation, size: Int) -> RowLocation {
        let number = Int(key >> IndexPage.shift)
        if number >= pages.count {
            guard location.isPresent else { return .absent }
            pages.reserveCapacity(Swift.max(number + 1, pages.count + pages.count / 8))
            // The pages a jump in keys passes over take no memory until a key in one is set.
            while pages.count < number { pages.append(.vacant) }
            pages.append(IndexPage())
        }
        if !isKnownUniquelyReferenced(&pages[number]) || pages[number].isVacant {
            guard let copy = try? pages[number].copy() else {
                preconditionFailure("an index page is written before it is prepared")
            }
            pages[number] = copy
        }
        let page = pages[number]
        let slot = Int(key) & (IndexPage.capacity - 1)
        guard let previousRaw = try? page.location(slot) else {
            preconditionFailure("an index page is written before it is prepared")
        }
        let previous = RowLocation(raw: previousRaw)
        if previous.isPresent != location.isPresent { liveCount += location.isPresent ? 1 : -1 }
        page.set(slot, location: location.raw, size: UInt32(clamping: size))
        // A page left without rows gives its memory back; the last page stays, as new keys go there.
        if page.liveCount == 0 && number < pages.count - 1 { pages[number] = IndexPage.vacant }
        return previous
    }

    /// The bytes of the pages in memory (a checkpoint's page takes none until it is read).
    var memoryBytes: Int {
        pages.capacity * MemoryLayout<IndexPage>.stride
            + pages.reduce(0) { $0 + ($1.isResident ? IndexPage.byteCount : 0) }
    }

    /// The bytes the index takes once every page is in memory.
    var fullMemoryBytes: Int {
        pages.capacity * MemoryLayout<IndexPage>.stride + pages.count * IndexPage.byteCount
    }
}
