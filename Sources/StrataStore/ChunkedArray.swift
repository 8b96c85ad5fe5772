/// An array kept in chunks of a fixed number of elements that copies of it share: a copy that
/// is appended to or changed copies the one chunk it changes (and the list of chunks), not every
/// element, and growing never moves the elements already there.
///
/// The store's block table and history directory (``StoreState``) grow by an entry a commit
/// while copies of them are held outside the state's lock (a checkpoint being written, a scan
/// resolving its rows). As arrays, the first append after such a copy copied the whole table,
/// which at millions of entries is tens of megabytes a commit, and growth by doubling kept up to
/// twice the table's memory.
///
/// A chunk whose elements are all of no further use can be **vacated** (``vacateChunks(filler:where:)``):
/// it keeps no storage and its positions read as a filler element, so an array indexed by numbers
/// that are never reused (block numbers) holds memory only for the chunks still in use.
struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection {
    /// How many bits of an index select the element within its chunk.
    private static var shift: Int { 12 }
    /// Elements per chunk.
    static var chunkCount: Int { 1 << shift }

    /// The chunks: each full but the last, which is not empty, and the first, whose first
    /// ``head`` elements were removed; a vacated chunk is an empty array.
    private var chunks: [[Element]] = []

    /// What the positions of vacated chunks read as; `nil` until a chunk is vacated.
    private var filler: Element?

    /// How many elements at the start of the first chunk were removed (``removeFirst(_:)``).
    private var head = 0

    /// The number of elements.
    private(set) var count = 0

    /// An empty array.
    init() {}

    /// The position of the first element: 0.
    var startIndex: Int { 0 }

    /// The position after the last element: ``count``.
    var endIndex: Int { count }

    /// The element at `position`, which must be below ``count``.
    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            let place = head + position
            // Only a vacated chunk is empty where a position lies.
            guard !chunks[place >> Self.shift].isEmpty else { return filler! }
            return chunks[place >> Self.shift][place & (Self.chunkCount - 1)]
        }
        _modify {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            let place = head + position
            occupy(place >> Self.shift)
            yield &chunks[place >> Self.shift][place & (Self.chunkCount - 1)]
        }
    }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if (head + count) & (Self.chunkCount - 1) == 0 { chunks.append([]) } else { occupy(chunks.count - 1) }
        let last = chunks.count - 1
        // A chunk grows by doubling up to its size, never past it, as an array's growth would.
        let capacity = chunks[last].capacity
        if chunks[last].count == capacity {
            chunks[last].reserveCapacity(Swift.min(Swift.max(2 * capacity, 16), Self.chunkCount))
        }
        chunks[last].append(element)
        count += 1
    }

    /// Appends `elements` a chunk's worth at a time: each chunk reserves the room it takes once
    /// and gets its elements in one copy, where appending one at a time checks and grows the
    /// last chunk for each (an open adds the checkpoint's last page of the block table this way).
    mutating func append(contentsOf elements: [Element]) {
        var next = 0
        while next < elements.count {
            let end = head + count
            if end & (Self.chunkCount - 1) == 0 { chunks.append([]) } else { occupy(chunks.count - 1) }
            let last = chunks.count - 1
            let taken = Swift.min(Self.chunkCount - (end & (Self.chunkCount - 1)), elements.count - next)
            chunks[last].reserveCapacity(chunks[last].count + taken)
            chunks[last].append(contentsOf: elements[next..<(next + taken)])
            count += taken
            next += taken
        }
    }

    /// Removes the first `removed` elements (at most ``count``), dropping the chunks they filled.
    mutating func removeFirst(_ removed: Int) {
        precondition(removed >= 0 && removed <= count, "ChunkedArray cannot remove more elements than it has")
        guard removed < count else { return removeAll() }
        head += removed
        count -= removed
        chunks.removeFirst(head >> Self.shift)
        head &= Self.chunkCount - 1
    }

    /// Adds `added` positions at the end that read as `filler`, as those of vacated chunks do:
    /// whole chunks of them are vacated from the start, so they take no storage.
    mutating func appendVacant(_ added: Int, filler: Element) {
        self.filler = filler
        var remaining = added
        while remaining > 0 {
            if (head + count) & (Self.chunkCount - 1) == 0 && remaining >= Self.chunkCount {
                chunks.append([])
                count += Self.chunkCount
                remaining -= Self.chunkCount
            } else {
                append(filler)
                remaining -= 1
            }
        }
    }

    /// Vacates every chunk whose elements all satisfy `isVacant` (the removed ones of the first
    /// chunk aside): its storage is freed, and its positions read as `filler` from then on, as do
    /// those of chunks vacated before. A chunk shared with a copy stays in the copy.
    mutating func vacateChunks(filler: Element, where isVacant: (Element) throws -> Bool) rethrows {
        self.filler = filler
        for chunk in chunks.indices where !chunks[chunk].isEmpty {
            if try chunks[chunk][(chunk == 0 ? head : 0)...].allSatisfy(isVacant) { chunks[chunk] = [] }
        }
    }

    /// The ranges of positions in chunks that are not vacated, in order: the positions whose
    /// elements are stored.
    var occupiedRanges: [Range<Int>] {
        chunks.indices.compactMap { chunk in
            guard !chunks[chunk].isEmpty else { return nil }
            let start = Swift.max(chunk << Self.shift - head, 0)
            return start..<Swift.min((chunk + 1) << Self.shift - head, count)
        }
    }

    /// Gives vacated chunk `chunk` the elements `elements`, one for each of its positions, kept as
    /// given (an array shared with whoever else holds it): a chunk read from elsewhere after the
    /// positions were added vacant (``appendVacant(_:filler:)``). Only while no element was removed
    /// from the front.
    mutating func fill(chunk: Int, with elements: [Element]) {
        precondition(head == 0 && chunks[chunk].isEmpty, "ChunkedArray fills only a vacated chunk")
        precondition(
            elements.count == Swift.min((chunk + 1) << Self.shift, count) - chunk << Self.shift,
            "ChunkedArray fills a chunk with one element a position")
        chunks[chunk] = elements
    }

    /// Gives vacated chunk `chunk` its storage back, every position holding the filler.
    private mutating func occupy(_ chunk: Int) {
        guard chunks[chunk].isEmpty else { return }
        let end = Swift.min((chunk + 1) << Self.shift, head + count)
        let stored = end - chunk << Self.shift
        guard stored > 0 else { return }
        chunks[chunk].reserveCapacity(chunk == chunks.count - 1 ? Swift.max(stored, 16) : Self.chunkCount)
        chunks[chunk].append(contentsOf: repeatElement(filler!, count: stored))
    }

    /// Removes every element.
    mutating func removeAll() {
        chunks = []
        head = 0
        count = 0
    }

    /// The bytes the elements' storage takes: the chunks' capacities and the list of them.
    var allocatedBytes: Int {
        chunks.reduce(chunks.capacity * MemoryLayout<[Element]>.stride) {
            $0 + $1.capacity * MemoryLayout<Element>.stride
        }
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}
