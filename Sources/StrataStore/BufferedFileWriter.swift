/// Writes a file front to back through a buffer of bounded size, so that a large file (a
/// checkpoint) is written without its bytes held in memory: appended bytes collect in
/// ``pending`` and go to the file once they reach ``flushBytes`` (``defaultFlushBytes`` unless told).
///
/// It also keeps the checksum of a run of appended bytes (a section whose length and checksum
/// precede it, written once known), moves past bytes to be written later, and writes bytes at
/// an earlier offset (a head whose contents are known last).
struct BufferedFileWriter {
    /// How many appended bytes are collected before they are written unless told: 256 KiB, so
    /// that the buffer stays below the sizes the allocator serves from their own mappings once it
    /// has seen such large blocks freed (glibc raises its mapping threshold up to 32 MiB, and
    /// keeps twice that free before it gives memory back).
    static let defaultFlushBytes = 256 << 10
    /// The room past ``flushBytes`` that ``pending`` keeps for the fields appended before a
    /// ``flushIfFull()``.
    private static let fieldRoom = 64

    /// How many appended bytes are collected before they are written.
    let flushBytes: Int
    /// The system calls.
    private let io: any FileIO
    /// The open file.
    private let fd: Int32
    /// The bytes appended and not written yet; they go at ``written``. Its capacity is reserved
    /// once, so that it does not grow past the flush size.
    var pending: BinaryWriter
    /// Where in the file ``pending`` goes.
    private var written: Int64
    /// The checksum of the bytes written since ``beginChecksum()``, and how many they are; `nil`
    /// when no checksum is kept.
    private var checksummed: (checksum: UInt32, length: Int)?

    /// A writer of `fd` whose first appended byte goes at `offset`, writing appended bytes
    /// `flushBytes` at a time.
    init(io: any FileIO, fd: Int32, at offset: Int64, flushBytes: Int = defaultFlushBytes) {
        self.io = io
        self.fd = fd
        self.flushBytes = flushBytes
        pending = BinaryWriter(capacity: flushBytes + Self.fieldRoom)
        written = offset
    }

    /// Where the next appended byte goes.
    var offset: Int64 { written + Int64(pending.count) }

    /// Appends `bytes`, writing the pending bytes first when they would pass ``flushBytes``: a
    /// run of ``flushBytes`` or more is written at once rather than copied.
    ///
    /// - Throws: ``SystemCallError`` when a write fails.
    mutating func append(_ bytes: [UInt8]) throws {
        if pending.count + bytes.count > flushBytes { try flush() }
        guard bytes.count < flushBytes else { return try bytes.withUnsafeBytes { try write($0) } }
        pending.raw(bytes)
    }

    /// Writes the pending bytes once they reach ``flushBytes`` (after appending to ``pending``).
    ///
    /// - Throws: ``SystemCallError`` when the write fails.
    mutating func flushIfFull() throws {
        if pending.count >= flushBytes { try flush() }
    }

    /// Writes the pending bytes.
    ///
    /// - Throws: ``SystemCallError`` when the write fails.
    mutating func flush() throws {
        try pending.bytes.withUnsafeBytes { try write($0) }
        pending.bytes.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` at ``written``, extending the checksum kept.
    private mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try io.writeAll(fd, bytes, at: written)
        written += Int64(bytes.count)
        if let run = checksummed {
            checksummed = (CRC32C.checksum(bytes, extending: run.checksum), run.length + bytes.count)
        }
    }

    /// Starts the checksum of the bytes appended from here on.
    ///
    /// - Throws: ``SystemCallError`` when writing the bytes pending before fails.
    mutating func beginChecksum() throws {
        try flush()
        checksummed = (0, 0)
    }

    /// The length and (unmasked) checksum of the bytes appended since ``beginChecksum()``, which
    /// are written.
    ///
    /// - Throws: ``SystemCallError`` when writing them fails.
    mutating func endChecksum() throws -> (length: Int, checksum: UInt32) {
        try flush()
        let run = checksummed ?? (0, 0)
        checksummed = nil
        return (run.length, run.checksum)
    }

    /// Makes the next appended byte go at `offset`, past bytes written later with
    /// ``write(_:at:)``.
    ///
    /// - Throws: ``SystemCallError`` when writing the pending bytes fails.
    mutating func move(to offset: Int64) throws {
        try flush()
        written = offset
    }

    /// Writes `bytes` at `offset`, apart from the appended ones.
    ///
    /// - Throws: ``SystemCallError`` when the write fails.
    func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try io.writeAll(fd, $0, at: offset) }
    }
}
