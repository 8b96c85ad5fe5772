/// Reads the records of a sealed segment in order through a window of the file, so that a pass
/// over a segment (compaction's) holds about ``size`` bytes of it in memory, or one record when
/// a record is larger, instead of the whole segment (64 MiB by default).
struct SegmentRecordWindow {
    /// The bytes a window reads at least: a few dozen small records, or one large one.
    static let size = 1 << 20

    /// The segment.
    let file: SegmentFile
    /// The segment's length in bytes.
    let fileSize: Int64
    /// The bytes read at least each time.
    let windowSize: Int
    /// The bytes read last.
    private var window: [UInt8] = []
    /// Where ``window`` starts in the file.
    private var windowStart: Int64 = 0

    /// A window over `file`, `fileSize` bytes long, reading `windowSize` bytes at a time.
    init(file: SegmentFile, fileSize: Int64, windowSize: Int = Self.size) {
        self.file = file
        self.fileSize = fileSize
        self.windowSize = windowSize
    }

    /// Bytes of the file holding the record that starts at `offset`, and where it starts in
    /// them: the whole record when its header declares a length that fits the file, else what
    /// the file has from `offset` up to a window's size (which a parse then refuses).
    ///
    /// - Throws: ``StoreError`` `io` when a read fails.
    mutating func record(at offset: Int64) throws -> (bytes: [UInt8], start: Int) {
        if !holds(offset, count: RecordHeader.size) { try load(at: offset, count: max(windowSize, RecordHeader.size)) }
        let start = Int(offset - windowStart)
        guard window.count - start >= RecordHeader.size else { return (window, start) }
        let length = window.withUnsafeBytes {
            ParsedRecord.declaredLength(UnsafeRawBufferPointer(rebasing: $0[start...]))
        }
        if length >= RecordHeader.size, Int64(length) <= fileSize - offset, !holds(offset, count: length) {
            try load(at: offset, count: max(windowSize, length))
        }
        return (window, Int(offset - windowStart))
    }

    /// Whether the window holds the `count` bytes at `offset`.
    private func holds(_ offset: Int64, count: Int) -> Bool {
        offset >= windowStart && offset + Int64(count) <= windowStart + Int64(window.count)
    }

    /// Reads `count` bytes at `offset`, or what the file has there.
    private mutating func load(at offset: Int64, count: Int) throws {
        window = []  // The bytes read before are let go before the next ones are read.
        window = try file.read(at: offset, count: Int(min(Int64(count), max(fileSize - offset, 0))))
        windowStart = offset
    }
}
