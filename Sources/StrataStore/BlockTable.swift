/// The store's block table: where each block number's block sits in the log, by number.
///
/// Numbers are never reused (row locations and the block cache name blocks by them). The table
/// keeps its places in a ``ChunkedArray``: the chunks of numbers whose blocks all lie in deleted
/// segments are vacated (``dropBlocks(outside:)``), so its memory follows the blocks of live
/// segments. A table opened from a checkpoint holds the chunks of that checkpoint's pages
/// vacated too, until a number in one is first used: then the page is read
/// (``BlockTablePage``) and its blocks fill the chunk. So an open reads no page of the table but
/// its last, and a store whose table is larger than memory reads only the pages it uses.
struct BlockTable: Sendable {
    /// The places; the chunks of pages not yet read and of dropped numbers are vacated, and read
    /// as ``BlockLocation/dropped``.
    private(set) var stored = ChunkedArray<BlockLocation>()
    /// By chunk, the checkpoint page whose blocks the chunk still waits for; empty when none does.
    private var pending: [BlockTablePage?] = []

    /// The number of block numbers handed out.
    var count: Int { stored.count }

    /// Whether no number was handed out.
    var isEmpty: Bool { stored.isEmpty }

    /// An empty table.
    init() {}

    /// The place of block `number` (below ``count``), reading its page first if it is a
    /// checkpoint's not yet read; ``BlockLocation/dropped`` for a number whose block was dropped.
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` when the page cannot be read or fails its
    ///   verification.
    mutating func location(_ number: Int) throws -> BlockLocation {
        let chunk = number >> Self.shift
        if chunk < pending.count { try read(chunk: chunk) }
        return stored[number]
    }

    /// Reads every page not yet read, so that ``stored`` holds every block.
    ///
    /// - Throws: as ``location(_:)``.
    mutating func load() throws {
        for chunk in pending.indices { try read(chunk: chunk) }
        pending = []
    }

    /// Fills chunk `chunk` with its page's blocks when it waits for one.
    private mutating func read(chunk: Int) throws {
        guard let page = pending[chunk] else { return }
        stored.fill(chunk: chunk, with: try page.load())
        pending[chunk] = nil
    }

    /// Every block, its pages read first (``load()``).
    ///
    /// - Throws: as ``location(_:)``.
    func loaded() throws -> ChunkedArray<BlockLocation> {
        var table = self
        try table.load()
        return table.stored
    }

    /// Adds a block at the end and returns its number. The last chunk is never a page still to
    /// be read (``appendPage(_:)`` reads a partial last page).
    mutating func append(_ block: BlockLocation) -> UInt32 {
        stored.append(block)
        return UInt32(stored.count - 1)
    }

    /// Adds the numbers of a checkpoint page not read yet, from a chunk's start: a whole chunk's
    /// worth, which take no memory until one is used. A page that would be the table's last,
    /// partial chunk is read now.
    ///
    /// - Throws: as ``location(_:)``, for a partial page.
    mutating func appendPage(_ page: BlockTablePage) throws {
        precondition(stored.count & (Self.capacity - 1) == 0, "a page of the block table starts a chunk")
        guard page.source.count == Self.capacity else { return stored.append(contentsOf: try page.load()) }
        let chunk = stored.count >> Self.shift
        stored.appendVacant(Self.capacity, filler: .dropped)
        pending += [BlockTablePage?](repeating: nil, count: chunk + 1 - pending.count)
        pending[chunk] = page
    }

    /// Adds `count` dropped numbers.
    mutating func appendDropped(_ count: Int) {
        stored.appendVacant(count, filler: .dropped)
    }

    /// Frees the chunks whose blocks all lie outside `live` segments. Call after ``load()``:
    /// a page not read yet is left as it is.
    mutating func dropBlocks(outside live: Set<UInt32>) {
        stored.vacateChunks(filler: .dropped) { !live.contains($0.segment) }
    }

    /// The ranges of numbers whose blocks are stored or still to be read, in order: the numbers
    /// of chunks not dropped.
    var occupiedRanges: [Range<Int>] {
        let waiting = pending.indices.compactMap { chunk in
            pending[chunk] == nil ? nil : (chunk << Self.shift)..<Swift.min((chunk + 1) << Self.shift, count)
        }
        guard !waiting.isEmpty else { return stored.occupiedRanges }
        return (stored.occupiedRanges + waiting).sorted { $0.lowerBound < $1.lowerBound }
    }

    /// How many blocks the pages not read yet hold.
    var pendingBlockCount: Int {
        pending.reduce(0) { $0 + ($1?.source.kept ?? 0) }
    }

    /// The bytes the places in memory take (pages not read take none).
    var allocatedBytes: Int {
        stored.allocatedBytes + pending.capacity * MemoryLayout<BlockTablePage?>.stride
    }

    /// The bytes the places take once every page is read.
    var allocatedBytesWhenRead: Int {
        allocatedBytes + pending.count { $0 != nil } * Self.capacity * MemoryLayout<BlockLocation>.stride
    }

    /// Block numbers per chunk of ``stored``, and per checkpoint page.
    static var capacity: Int { ChunkedArray<BlockLocation>.chunkCount }
    private static var shift: Int { capacity.trailingZeroBitCount }
}
