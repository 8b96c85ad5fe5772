/// The open segment files of a store, by segment id: a dictionary whose keys are hashed by
/// ``TableHashing`` rather than by a `Hasher`, which took more instructions than the rest of
/// the lookup every fault makes for its row's file (``StoreState/resolve(_:)``).
struct SegmentFiles: Sendable {
    /// A segment id as the table hashes it.
    private struct ID: Hashable {
        /// The segment id.
        var value: UInt32

        func _rawHashValue(seed: Int) -> Int { TableHashing.hash(UInt64(value), seed: seed) }
    }

    /// The files by id.
    private var files: [ID: SegmentFile] = [:]

    /// No file.
    init() {}

    /// The file of segment `id`; setting `nil` forgets it.
    subscript(id: UInt32) -> SegmentFile? {
        get { files[ID(value: id)] }
        set { files[ID(value: id)] = newValue }
    }

    /// Forgets every file.
    mutating func removeAll() {
        files.removeAll()
    }
}
