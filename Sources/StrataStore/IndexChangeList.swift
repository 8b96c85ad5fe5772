/// The fetch-index changes recorded for one index, in commit order, kept in the segments they
/// were recorded in: the parts of a bulk insert, recorded on several cores, are joined without
/// being copied (copying a million changes into fresh memory took ~30 ms of a 1M-row batch
/// insert, most of it the kernel zeroing pages).
struct IndexChangeList: RandomAccessCollection, Sendable {
    /// The segments, in order; none empty but the one of a list made with room reserved, until
    /// its first change.
    private var segments: [[OrderedIndexChange]] = []
    /// The position of each segment's first change.
    private var starts: [Int] = []
    /// The number of changes.
    private(set) var count = 0

    /// Creates an empty list.
    init() {}

    /// Creates an empty list with room for `capacity` changes in its first segment.
    init(reservingCapacity capacity: Int) {
        segments = [[]]
        segments[0].reserveCapacity(capacity)
        starts = [0]
    }

    /// The position of the first change.
    var startIndex: Int { 0 }
    /// The position after the last change.
    var endIndex: Int { count }

    /// The change at `position` (traps outside `0..<count`, as an array does).
    subscript(position: Int) -> OrderedIndexChange {
        guard segments.count > 1 else { return segments[0][position] }
        // The last segment starting at or before the position.
        var low = 0
        var high = starts.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if starts[middle] <= position { low = middle } else { high = middle }
        }
        return segments[low][position - starts[low]]
    }

    /// The changes in order, segment after segment (no lookup of a segment a change).
    func makeIterator() -> FlattenSequence<[[OrderedIndexChange]]>.Iterator {
        segments.joined().makeIterator()
    }

    /// Adds `change` after the others.
    mutating func append(_ change: OrderedIndexChange) {
        if segments.isEmpty {
            segments = [[change]]
            starts = [0]
        } else {
            segments[segments.count - 1].append(change)
        }
        count += 1
    }

    /// Fewer changes than this, appended to a list, are copied into its last segment rather than
    /// joined as segments of their own: a list that gathers many small commit groups' changes
    /// (``StoreState/pendingIndexChanges``) keeps few segments, and a change is found in one step.
    static let copiedAppend = 1024

    /// Adds the changes of `other` after these: copied when they are few, else sharing its segments.
    mutating func append(contentsOf other: IndexChangeList) {
        if !segments.isEmpty && other.count < Self.copiedAppend {
            // Array by array: appending `other` as a collection copied it change by change.
            for segment in other.segments { segments[segments.count - 1].append(contentsOf: segment) }
            count += other.count
            return
        }
        for segment in other.segments {
            starts.append(count)
            segments.append(segment)
            count += segment.count
        }
    }
}
