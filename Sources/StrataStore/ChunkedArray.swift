/// An array kept in chunks of a fixed number of elements that copies of it share: a copy that
/// is appended to or changed copies the one chunk it changes (and the list of chunks), not every
/// element, and growing never moves the elements already there.
///
/// The store's block table and history directory (``StoreState``) grow by an entry a commit
/// while copies of them are held outside the state's lock (a checkpoint being written, a scan
/// resolving its rows). As arrays, the first append after such a copy copied the whole table,
/// which at millions of entries is tens of megabytes a commit, and growth by doubling kept up to
/// twice the table's memory.
struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection {
    /// How many bits of an index select the element within its chunk.
    private static var shift: Int { 12 }
    /// Elements per chunk.
    static var chunkCount: Int { 1 << shift }

    /// The chunks: each full but the last, which is not empty, and the first, whose first
    /// ``head`` elements were removed.
    private var chunks: [[Element]] = []

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
            return chunks[place >> Self.shift][place & (Self.chunkCount - 1)]
        }
        _modify {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            let place = head + position
            yield &chunks[place >> Self.shift][place & (Self.chunkCount - 1)]
        }
    }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if (head + count) & (Self.chunkCount - 1) == 0 { chunks.append([]) }
        let last = chunks.count - 1
        // A chunk grows by doubling up to its size, never past it, as an array's growth would.
        let capacity = chunks[last].capacity
        if chunks[last].count == capacity {
            chunks[last].reserveCapacity(Swift.min(Swift.max(2 * capacity, 16), Self.chunkCount))
        }
        chunks[last].append(element)
        count += 1
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
