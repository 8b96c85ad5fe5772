/// The sorted chunks of a fetch index's (value, primary key) pairs in one representation of its
/// entries (``OrderedIndexEntry``): what ``OrderedIndex`` keeps and does its work on.
///
/// The pairs live in a list of sorted chunks of at most ``maxChunkSize`` entries, with the first
/// entry of every chunk kept aside for binary search. Inserting and removing cost O(log n + chunk
/// size); counting a range costs O(log n + chunks it spans); listing the first or last k keys of
/// a range costs O(log n + k). Every value and key given must fit the representation
/// (``OrderedIndexEntry/fits(_:key:)``); ``OrderedIndex`` sees to it.
struct SortedIndexEntries<Entry: OrderedIndexEntry>: Sendable {
    /// A place between entries: entry `offset` of chunk `chunk`, or the end at (`chunks.count`, 0).
    private struct Position {
        /// The chunk.
        var chunk: Int
        /// The entry within the chunk.
        var offset: Int
    }

    /// The most entries a chunk holds; a chunk growing past it is split in two.
    static var maxChunkSize: Int { OrderedIndex.maxChunkSize }
    /// The fewest changes a chunk, on average, for which ``merge(_:)`` copies the chunks they
    /// touch rather than inserting and removing them one at a time.
    static var mergeDensity: Int { OrderedIndex.mergeDensity }

    /// The entries, in order, cut into non-empty chunks.
    private var chunks: [[Entry]] = []
    /// The first entry of every chunk.
    private var heads: [Entry] = []

    /// The number of pairs.
    private(set) var count = 0

    /// Bytes a pair takes in a chunk.
    static var entryBytes: Int { MemoryLayout<Entry>.stride }

    /// Bytes of memory the index's arrays take (each chunk's storage, the heads and the chunk
    /// list), not the heap storage of strings or data too long for a `Value` to hold inline.
    var memoryBytes: Int {
        let entry = Self.entryBytes
        let arrayHeader = 32
        return chunks.reduce(heads.capacity * entry + chunks.capacity * 8 + 2 * arrayHeader) {
            $0 + $1.capacity * entry + arrayHeader
        }
    }

    /// Creates an empty index.
    init() {}

    /// Creates an index holding `pairs`, which may come in any order; repeated pairs are kept once.
    init(unsorted pairs: [(Value, PrimaryKey)]) {
        var entries = pairs.map { Entry(fitting: $0.0, key: $0.1) }
        entries.sort { $0.precedes($1) }
        var unique: [Entry] = []
        unique.reserveCapacity(entries.count)
        for entry in entries where unique.last.map({ $0.precedes(entry) }) ?? true {
            unique.append(entry)
        }
        var start = 0
        while start < unique.count {
            let end = min(start + Self.maxChunkSize, unique.count)
            chunks.append(Array(unique[start..<end]))
            heads.append(unique[start])
            start = end
        }
        count = unique.count
    }

    /// Creates an index from pairs that are expected in index order without repeats, as a
    /// checkpoint holds them: one comparison a pair, no sort. Pairs out of order are sorted.
    init(ordered pairs: [(Value, PrimaryKey)]) {
        for index in pairs.indices.dropFirst() {
            let previous = Entry(fitting: pairs[index - 1].0, key: pairs[index - 1].1)
            guard previous.precedes(Entry(fitting: pairs[index].0, key: pairs[index].1)) else {
                self.init(unsorted: pairs)
                return
            }
        }
        self.init(onlyInsertions: pairs.lazy.map { OrderedIndexChange(value: $0.0, key: $0.1, inserts: true) })!
    }

    /// Creates an index holding the pairs `changes` insert, which come in index order, one a
    /// pair (the net changes of a group, ``SettledFetchIndexChanges``, to an empty index): each
    /// entry copied once, straight into its chunk, with no comparison. `nil` when a change
    /// removes a pair or names one that does not fit the representation.
    init?(onlyInsertions changes: some Sequence<OrderedIndexChange>) {
        let chunkSize = Self.maxChunkSize * 3 / 4
        var chunk: [Entry] = []
        for change in changes {
            guard change.inserts, Entry.fits(change.value, key: change.key) else { return nil }
            if chunk.isEmpty { chunk.reserveCapacity(chunkSize) }
            let entry = Entry(fitting: change.value, key: change.key)
            assert(
                chunk.last.map { $0.precedes(entry) } ?? chunks.last.map { $0[$0.count - 1].precedes(entry) } ?? true,
                "changes out of index order")
            chunk.append(entry)
            if chunk.count == chunkSize {
                heads.append(chunk[0])
                chunks.append(chunk)
                count += chunk.count
                chunk = []
            }
        }
        if !chunk.isEmpty {
            heads.append(chunk[0])
            chunks.append(chunk)
            count += chunk.count
        }
    }

    /// The index's pairs as insertions, in index order.
    var insertions: [OrderedIndexChange] {
        chunks.flatMap { $0.map { OrderedIndexChange(value: $0.value, key: $0.key, inserts: true) } }
    }

    /// The same pairs in another representation, which every pair must fit. The order is kept:
    /// both representations order pairs as `Value`'s `<`, then by key.
    func converted<Other: OrderedIndexEntry>(to _: Other.Type) -> SortedIndexEntries<Other> {
        var result = SortedIndexEntries<Other>()
        result.chunks = chunks.map { $0.map { Other(fitting: $0.value, key: $0.key) } }
        result.heads = result.chunks.map { $0[0] }
        result.count = count
        return result
    }

    /// Whether every pair fits the representation `Other`.
    func fit<Other: OrderedIndexEntry>(_: Other.Type) -> Bool {
        chunks.allSatisfy { $0.allSatisfy { Other.fits($0.value, key: $0.key) } }
    }

    /// Adds the pair (`value`, `key`); does nothing if the index already holds it.
    mutating func insert(_ value: Value, key: PrimaryKey) {
        let entry = Entry(fitting: value, key: key)
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            heads = [entry]
            count = 1
            return
        }
        var position = firstPosition { $0.precedes(entry) }
        if position.chunk < chunks.count && !entry.precedes(chunks[position.chunk][position.offset]) { return }
        if position.offset == 0 && position.chunk > 0 {
            position.chunk -= 1
            position.offset = chunks[position.chunk].count
        }
        if chunks[position.chunk].count >= Self.maxChunkSize {
            // A full chunk is split before the entry goes in, each half copied to storage of its
            // own size. Growing it first doubled its storage, which its lower half kept: entries
            // inserted one at a time took twice their memory (1.99 times in OrderedIndexTests,
            // 1.08 now).
            let half = Self.maxChunkSize / 2
            let full = chunks[position.chunk]
            chunks[position.chunk] = Array(full[..<half])
            chunks.insert(Array(full[half...]), at: position.chunk + 1)
            heads.insert(full[half], at: position.chunk + 1)
            if position.offset > half {
                position.chunk += 1
                position.offset -= half
            }
        }
        chunks[position.chunk].insert(entry, at: position.offset)
        if position.offset == 0 { heads[position.chunk] = entry }
        count += 1
    }

    /// Applies `changes` in one pass: each removes or adds its pair (a removal of a pair the
    /// index does not hold, or an insertion of one it holds, does nothing). `changes` must be
    /// sorted in index order (by value, then key) and name each pair at most once.
    ///
    /// Costs O(k log n) to place the k changes plus one copy of each chunk they touch and of the
    /// chunk list, where inserting them one at a time moves a chunk's entries once per change.
    /// Copying an entry (retaining its value) costs more than moving it (a `memmove`), so the
    /// pass is taken only when the changes average ``mergeDensity`` or more a chunk; sparser
    /// changes (a group of small saves into a large index) are applied one at a time.
    mutating func merge(_ changes: [OrderedIndexChange]) {
        guard !changes.isEmpty else { return }
        guard !chunks.isEmpty else {
            // An empty index (a bulk load) is built from the insertions, already in order.
            self = SortedIndexEntries(onlyInsertions: changes.lazy.filter(\.inserts))!
            return
        }
        // Sparse changes move fewer bytes one at a time than copying every chunk they touch.
        guard mergesInOnePass(changes.count) else {
            for change in changes {
                if change.inserts {
                    insert(change.value, key: change.key)
                } else {
                    remove(change.value, key: change.key)
                }
            }
            return
        }
        var merged: [[Entry]] = []
        merged.reserveCapacity(chunks.count + changes.count / Self.maxChunkSize + 1)
        var next = 0
        var start = 0
        while start < changes.count {
            // The chunk a change belongs in: the last whose head does not follow it (the first
            // chunk for a change before every head).
            let first = Entry(fitting: changes[start].value, key: changes[start].key)
            var low = 0
            var high = heads.count
            while low < high {
                let middle = (low + high) / 2
                if first.precedes(heads[middle]) { high = middle } else { low = middle + 1 }
            }
            let chunk = max(low - 1, 0)
            let limit = chunk + 1 < heads.count ? heads[chunk + 1] : nil
            var end = start + 1
            while end < changes.count,
                limit.map({ Entry(fitting: changes[end].value, key: changes[end].key).precedes($0) }) ?? true
            {
                end += 1
            }
            merged.append(contentsOf: chunks[next..<chunk])
            next = chunk + 1
            let entries = chunks[chunk]
            var result: [Entry] = []
            result.reserveCapacity(entries.count + end - start)
            var offset = 0
            for change in changes[start..<end] {
                let entry = Entry(fitting: change.value, key: change.key)
                while offset < entries.count && entries[offset].precedes(entry) {
                    result.append(entries[offset])
                    offset += 1
                }
                let held = offset < entries.count && !entry.precedes(entries[offset])
                if held { offset += 1 }
                if held && !change.inserts { count -= 1 }
                if !held && change.inserts { count += 1 }
                if change.inserts { result.append(entry) }
            }
            result.append(contentsOf: entries[offset...])
            guard result.count > Self.maxChunkSize else {
                // The merged chunk fits: keep it as it is rather than copy it again.
                if !result.isEmpty { merged.append(result) }
                start = end
                continue
            }
            var piece = 0
            while piece < result.count {
                let size = result.count - piece > Self.maxChunkSize ? Self.maxChunkSize * 3 / 4 : result.count - piece
                merged.append(Array(result[piece..<(piece + size)]))
                piece += size
            }
            start = end
        }
        merged.append(contentsOf: chunks[next...])
        chunks = merged
        heads = chunks.map { $0[0] }
    }

    /// Whether ``merge(_:)`` takes `count` changes in its one pass, copying every chunk they
    /// touch (or builds an empty index from them), rather than one at a time.
    func mergesInOnePass(_ count: Int) -> Bool {
        chunks.isEmpty || count >= max(chunks.count * Self.mergeDensity, 8)
    }

    /// Removes the pair (`value`, `key`); does nothing if the index does not hold it.
    mutating func remove(_ value: Value, key: PrimaryKey) {
        let entry = Entry(fitting: value, key: key)
        let position = firstPosition { $0.precedes(entry) }
        guard position.chunk < chunks.count,
            !entry.precedes(chunks[position.chunk][position.offset])
        else { return }
        chunks[position.chunk].remove(at: position.offset)
        count -= 1
        if chunks[position.chunk].isEmpty {
            chunks.remove(at: position.chunk)
            heads.remove(at: position.chunk)
            return
        }
        if position.offset == 0 { heads[position.chunk] = chunks[position.chunk][0] }
        // Removing keeps a chunk's storage: one that deletes emptied to a quarter of it is
        // copied to storage of its size.
        let remaining = chunks[position.chunk]
        if remaining.capacity >= 64 && remaining.count <= remaining.capacity / 4 {
            // `Array(remaining)` would share the storage rather than copy it.
            var compact: [Entry] = []
            compact.reserveCapacity(remaining.count)
            compact.append(contentsOf: remaining)
            chunks[position.chunk] = compact
        }
    }

    /// The keys of the pairs matching `query`, in index order (by value, then key) or its reverse
    /// when `descending`, at most `limit` of them.
    ///
    /// Costs O(log n + keys returned) for an equality or a range: only the entries returned are
    /// visited, from whichever end of the range the order starts at.
    func keys(matching query: IndexQuery, descending: Bool = false, limit: Int? = nil) -> [PrimaryKey] {
        precondition((limit ?? 0) >= 0, "OrderedIndex limit must not be negative")
        var remaining = limit ?? Int.max
        var keys: [PrimaryKey] = []
        if let limit { keys.reserveCapacity(min(limit, count)) }
        let spans = spans(matching: query)
        for index in spans.indices where remaining > 0 {
            let span = spans[descending ? spans.count - 1 - index : index]
            let last = min(span.end.chunk, chunks.count - 1)
            var chunk = descending ? last : span.start.chunk
            while remaining > 0 && chunk >= span.start.chunk && chunk <= last {
                let lower = chunk == span.start.chunk ? span.start.offset : 0
                let upper = chunk == span.end.chunk ? span.end.offset : chunks[chunk].count
                if lower < upper {
                    let taken = min(upper - lower, remaining)
                    let entries = chunks[chunk]
                    if descending {
                        for offset in stride(from: upper - 1, through: upper - taken, by: -1) {
                            keys.append(entries[offset].key)
                        }
                    } else {
                        for offset in lower..<(lower + taken) { keys.append(entries[offset].key) }
                    }
                    remaining -= taken
                }
                chunk += descending ? -1 : 1
            }
        }
        return keys
    }

    /// The number of pairs matching `query`.
    func count(matching query: IndexQuery) -> Int {
        spans(matching: query).reduce(0) { total, span in
            var total = total
            for chunk in stride(from: span.start.chunk, through: min(span.end.chunk, chunks.count - 1), by: 1) {
                let lower = chunk == span.start.chunk ? span.start.offset : 0
                let upper = chunk == span.end.chunk ? span.end.offset : chunks[chunk].count
                total += max(upper - lower, 0)
            }
            return total
        }
    }

    /// Calls `body` with every pair, in index order.
    func forEach(_ body: (Value, PrimaryKey) throws -> Void) rethrows {
        for chunk in chunks {
            for entry in chunk { try body(entry.value, entry.key) }
        }
    }

    /// The entries matching `query`, in index order, as spans from a first position up to just
    /// before an end position (empty when the end is not after the start); one span per value
    /// of an `in` query.
    private func spans(matching query: IndexQuery) -> [(start: Position, end: Position)] {
        switch query {
        case .equal(let value):
            return [equalSpan(value)]
        case .in(let values):
            var distinct: [Value] = []
            for value in values.sorted(by: <) where distinct.last.map({ $0 < value }) ?? true {
                distinct.append(value)
            }
            return distinct.map(equalSpan)
        case .range(let lower, let upper):
            let start = firstPosition { entry in
                if entry.value.isNull { return true }
                guard let lower else { return false }
                return lower.isInclusive ? entry.value < lower.value : !(lower.value < entry.value)
            }
            let end = firstPosition { entry in
                guard let upper else { return true }
                return upper.isInclusive ? !(upper.value < entry.value) : entry.value < upper.value
            }
            return [(start, end)]
        }
    }

    /// The span of the entries whose value equals `value`.
    private func equalSpan(_ value: Value) -> (start: Position, end: Position) {
        (firstPosition { $0.value < value }, firstPosition { !(value < $0.value) })
    }

    /// The first entry for which `isBelow` is false, given that it is true for a prefix of the
    /// entries and false for the rest; the end, at (`chunks.count`, 0), when it is true for all.
    private func firstPosition(where isBelow: (Entry) -> Bool) -> Position {
        var low = 0
        var high = heads.count
        while low < high {
            let middle = (low + high) / 2
            if isBelow(heads[middle]) { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return Position(chunk: 0, offset: 0) }
        let chunk = chunks[low - 1]
        var lowOffset = 1
        var highOffset = chunk.count
        while lowOffset < highOffset {
            let middle = (lowOffset + highOffset) / 2
            if isBelow(chunk[middle]) { lowOffset = middle + 1 } else { highOffset = middle }
        }
        return lowOffset == chunk.count
            ? Position(chunk: low, offset: 0)
            : Position(chunk: low - 1, offset: lowOffset)
    }
}
