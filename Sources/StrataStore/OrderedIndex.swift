/// A column's fetch index: (value, primary key) pairs kept sorted by value, then key.
///
/// The pairs are kept in sorted chunks (``SortedIndexEntries``), in the smallest representation
/// that holds them all: while every value is an integer (or null), or every value a to-one
/// reference (or null), and no key is negative, 16 bytes a pair (``PackedIndexEntry``), else 32
/// (``GeneralIndexEntry``). An index starts packed, for integers, and changes representation (a
/// copy of its pairs) when a pair that does not fit arrives. Values are ordered by `Value`'s `<`,
/// and two values neither of which is less than the other count as equal. A pair is held at
/// most once. `OrderedIndex` is a value type; its owner serializes access.
struct OrderedIndex: Sendable {
    /// The chunks, in one of the representations.
    private enum Storage: Sendable {
        case ints(SortedIndexEntries<PackedIndexEntry<IntIndexKind>>)
        case references(SortedIndexEntries<PackedIndexEntry<ReferenceIndexKind>>)
        case general(SortedIndexEntries<GeneralIndexEntry>)
    }

    /// The most entries a chunk holds; a chunk growing past it is split in two.
    static let maxChunkSize = 512
    /// The fewest changes a chunk, on average, for which ``merge(_:)`` copies the chunks they
    /// touch rather than inserting and removing them one at a time.
    static let mergeDensity = 16

    private var storage: Storage

    /// Creates an empty index.
    init() {
        storage = .ints(SortedIndexEntries())
    }

    /// Creates an index holding `pairs`, which may come in any order; repeated pairs are kept once.
    init(unsorted pairs: [(Value, PrimaryKey)]) {
        switch Self.representation(of: pairs.lazy.map { ($0.0, $0.1) }) {
        case .ints: storage = .ints(SortedIndexEntries(unsorted: pairs))
        case .references: storage = .references(SortedIndexEntries(unsorted: pairs))
        case .general: storage = .general(SortedIndexEntries(unsorted: pairs))
        }
    }

    /// Creates an index from pairs that are expected in index order without repeats, as a
    /// checkpoint holds them: one comparison a pair, no sort. Pairs out of order are sorted.
    init(ordered pairs: [(Value, PrimaryKey)]) {
        switch Self.representation(of: pairs.lazy.map { ($0.0, $0.1) }) {
        case .ints: storage = .ints(SortedIndexEntries(ordered: pairs))
        case .references: storage = .references(SortedIndexEntries(ordered: pairs))
        case .general: storage = .general(SortedIndexEntries(ordered: pairs))
        }
    }

    /// Creates an index holding the pairs `changes` insert, which come in index order, one a
    /// pair (the net changes of a group, ``SettledFetchIndexChanges``, to an empty index): each
    /// entry copied once, straight into its chunk, with no comparison. `nil` when a change
    /// removes a pair.
    ///
    /// The chunks are built packed for integers in one pass over `changes`; at the first pair
    /// that does not fit, they are built again in the next larger representation (a column of
    /// another kind meets its first value at once).
    init?(onlyInsertions changes: some Collection<OrderedIndexChange>) {
        if let entries = SortedIndexEntries<PackedIndexEntry<IntIndexKind>>(onlyInsertions: changes) {
            storage = .ints(entries)
        } else if let entries = SortedIndexEntries<PackedIndexEntry<ReferenceIndexKind>>(onlyInsertions: changes) {
            storage = .references(entries)
        } else if let entries = SortedIndexEntries<GeneralIndexEntry>(onlyInsertions: changes) {
            storage = .general(entries)
        } else {
            return nil
        }
    }

    /// The representations, by name.
    private enum Representation {
        case ints, references, general
    }

    /// The smallest representation that holds every pair of `pairs`.
    private static func representation(of pairs: some Sequence<(Value, PrimaryKey)>) -> Representation {
        var ints = true
        var references = true
        for (value, key) in pairs {
            ints = ints && PackedIndexEntry<IntIndexKind>.fits(value, key: key)
            references = references && PackedIndexEntry<ReferenceIndexKind>.fits(value, key: key)
            if !ints && !references { return .general }
        }
        return ints ? .ints : references ? .references : .general
    }

    /// Changes the representation, when need be, to one that also holds the pairs of `pairs`.
    private mutating func makeRoom(for pairs: some Collection<(Value, PrimaryKey)>) {
        switch storage {
        case .ints(let entries):
            if let widened = Self.widened(entries, as: Storage.references, for: pairs) { storage = widened }
        case .references(let entries):
            if let widened = Self.widened(entries, as: Storage.ints, for: pairs) { storage = widened }
        case .general:
            return
        }
    }

    /// What packed `entries` become to hold `pairs` too, or `nil` when every pair fits them: the
    /// other packed kind (made with `other`) when it holds their pairs and `pairs`, else general.
    private static func widened<Kind: PackedIndexKind, OtherKind: PackedIndexKind>(
        _ entries: SortedIndexEntries<PackedIndexEntry<Kind>>,
        as other: (SortedIndexEntries<PackedIndexEntry<OtherKind>>) -> Storage,
        for pairs: some Collection<(Value, PrimaryKey)>
    ) -> Storage? {
        guard !pairs.allSatisfy({ PackedIndexEntry<Kind>.fits($0.0, key: $0.1) }) else { return nil }
        if entries.fit(PackedIndexEntry<OtherKind>.self),
            pairs.allSatisfy({ PackedIndexEntry<OtherKind>.fits($0.0, key: $0.1) })
        {
            return other(entries.converted(to: PackedIndexEntry<OtherKind>.self))
        }
        return .general(entries.converted(to: GeneralIndexEntry.self))
    }

    /// The number of pairs.
    var count: Int {
        switch storage {
        case .ints(let entries): entries.count
        case .references(let entries): entries.count
        case .general(let entries): entries.count
        }
    }

    /// Bytes a pair takes in a chunk, in the index's representation now.
    var entryBytes: Int {
        switch storage {
        case .ints: SortedIndexEntries<PackedIndexEntry<IntIndexKind>>.entryBytes
        case .references: SortedIndexEntries<PackedIndexEntry<ReferenceIndexKind>>.entryBytes
        case .general: SortedIndexEntries<GeneralIndexEntry>.entryBytes
        }
    }

    /// Bytes of memory the index's arrays take (each chunk's storage, the heads and the chunk
    /// list), not the heap storage of strings or data too long for a `Value` to hold inline.
    var memoryBytes: Int {
        switch storage {
        case .ints(let entries): entries.memoryBytes
        case .references(let entries): entries.memoryBytes
        case .general(let entries): entries.memoryBytes
        }
    }

    /// The index's pairs as insertions, in index order.
    var insertions: [OrderedIndexChange] {
        switch storage {
        case .ints(let entries): entries.insertions
        case .references(let entries): entries.insertions
        case .general(let entries): entries.insertions
        }
    }

    /// Adds the pair (`value`, `key`); does nothing if the index already holds it.
    mutating func insert(_ value: Value, key: PrimaryKey) {
        makeRoom(for: CollectionOfOne((value, key)))
        change(Insertion(value: value, key: key))
    }

    /// Removes the pair (`value`, `key`); does nothing if the index does not hold it.
    mutating func remove(_ value: Value, key: PrimaryKey) {
        // A value of another kind may still equal a held one (`.double(3)` and `.int(3)`).
        makeRoom(for: CollectionOfOne((value, key)))
        change(Removal(value: value, key: key))
    }

    /// Applies `changes` in one pass: each removes or adds its pair (a removal of a pair the
    /// index does not hold, or an insertion of one it holds, does nothing). `changes` must be
    /// sorted in index order (by value, then key) and name each pair at most once.
    ///
    /// Costs O(k log n) to place the k changes plus one copy of each chunk they touch and of the
    /// chunk list, where inserting them one at a time moves a chunk's entries once per change.
    /// Copying an entry costs more than moving it (a `memmove`), so the pass is taken only when
    /// the changes average ``mergeDensity`` or more a chunk; sparser changes (a group of small
    /// saves into a large index) are applied one at a time.
    mutating func merge(_ changes: [OrderedIndexChange]) {
        makeRoom(for: changes.lazy.map { ($0.value, $0.key) })
        change(Merge(changes: changes))
    }

    /// Makes `change` to the chunks, in place: they are taken out of ``storage`` first, so that
    /// `storage` does not share them while they change.
    private mutating func change(_ change: some EntriesChange) {
        switch storage {
        case .ints(var entries):
            storage = .general(SortedIndexEntries())
            change.apply(to: &entries)
            storage = .ints(entries)
        case .references(var entries):
            storage = .general(SortedIndexEntries())
            change.apply(to: &entries)
            storage = .references(entries)
        case .general(var entries):
            storage = .ints(SortedIndexEntries())
            change.apply(to: &entries)
            storage = .general(entries)
        }
    }

    /// Whether ``merge(_:)`` takes `count` changes in its one pass, copying every chunk they
    /// touch (or builds an empty index from them), rather than one at a time.
    func mergesInOnePass(_ count: Int) -> Bool {
        switch storage {
        case .ints(let entries): entries.mergesInOnePass(count)
        case .references(let entries): entries.mergesInOnePass(count)
        case .general(let entries): entries.mergesInOnePass(count)
        }
    }

    /// The keys of the pairs matching `query`, in index order (by value, then key) or its reverse
    /// when `descending`, at most `limit` of them.
    ///
    /// Costs O(log n + keys returned) for an equality or a range: only the entries returned are
    /// visited, from whichever end of the range the order starts at.
    func keys(matching query: IndexQuery, descending: Bool = false, limit: Int? = nil) -> [PrimaryKey] {
        switch storage {
        case .ints(let entries): entries.keys(matching: query, descending: descending, limit: limit)
        case .references(let entries): entries.keys(matching: query, descending: descending, limit: limit)
        case .general(let entries): entries.keys(matching: query, descending: descending, limit: limit)
        }
    }

    /// The number of pairs matching `query`.
    func count(matching query: IndexQuery) -> Int {
        switch storage {
        case .ints(let entries): entries.count(matching: query)
        case .references(let entries): entries.count(matching: query)
        case .general(let entries): entries.count(matching: query)
        }
    }

    /// Calls `body` with every pair, in index order.
    func forEach(_ body: (Value, PrimaryKey) throws -> Void) rethrows {
        switch storage {
        case .ints(let entries): try entries.forEach(body)
        case .references(let entries): try entries.forEach(body)
        case .general(let entries): try entries.forEach(body)
        }
    }
}

/// One change ``OrderedIndex/merge(_:)`` applies: add or remove the pair (`value`, `key`).
struct OrderedIndexChange: Sendable {
    /// The column value.
    var value: Value
    /// The primary key of the row.
    var key: PrimaryKey
    /// Whether the pair is added (else removed).
    var inserts: Bool
}

/// A change ``OrderedIndex`` makes to its chunks, whatever their representation; every pair it
/// names fits it.
private protocol EntriesChange {
    /// Makes the change to `entries`.
    func apply<Entry: OrderedIndexEntry>(to entries: inout SortedIndexEntries<Entry>)
}

/// ``OrderedIndex/insert(_:key:)``'s change.
private struct Insertion: EntriesChange {
    let value: Value
    let key: PrimaryKey

    func apply<Entry: OrderedIndexEntry>(to entries: inout SortedIndexEntries<Entry>) {
        entries.insert(value, key: key)
    }
}

/// ``OrderedIndex/remove(_:key:)``'s change.
private struct Removal: EntriesChange {
    let value: Value
    let key: PrimaryKey

    func apply<Entry: OrderedIndexEntry>(to entries: inout SortedIndexEntries<Entry>) {
        entries.remove(value, key: key)
    }
}

/// ``OrderedIndex/merge(_:)``'s change.
private struct Merge: EntriesChange {
    let changes: [OrderedIndexChange]

    func apply<Entry: OrderedIndexEntry>(to entries: inout SortedIndexEntries<Entry>) {
        entries.merge(changes)
    }
}
