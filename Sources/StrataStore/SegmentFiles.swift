/// The open segment files of a store, by segment id: a dictionary keyed by ``TableKey``, not by
/// the id itself, whose `Hasher` took more instructions than the rest of the lookup every fault
/// makes for its row's file (``StoreState/resolve(_:)``).
struct SegmentFiles: Sendable {
    /// The files by id.
    private var files: [TableKey: SegmentFile] = [:]

    /// No file.
    init() {}

    /// The file of segment `id`; setting `nil` forgets it.
    subscript(id: UInt32) -> SegmentFile? {
        get { files[TableKey(value: UInt64(id))] }
        set { files[TableKey(value: UInt64(id))] = newValue }
    }

    /// Forgets every file.
    mutating func removeAll() {
        files.removeAll()
    }
}
