import Foundation
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#endif

// Feeds damaged store directories to the storage engine: each input is a list of edits to the
// files of a small real store (built once, at start-up, with the public API), optionally
// followed by recomputing every checksum the format defines, so that the parsers behind the
// checksums see the damage. The edited store is verified, opened (recovered), read in every way
// a caller can (rows, encoded rows, scans, fetch indexes, history), compacted, written to and
// closed. Every failure must be a `StoreError`; a `corrupt` one must name a file and an offset,
// and `Store.verify` (what `strata verify` runs) must report the damage. Any other error, crash,
// trap, hang or leak is a finding.
//
// Input: one flags byte, then edits (at most `maximumEdits`). Flags: bit 0 re-seals the
// checksums after the edits; bit 1 starts from the cleanly closed store instead of the crashed
// one; bit 2 opens read-only. An edit is an operation byte, a file byte (an index into the
// store's files in name order: the checkpoint, the manifest, then the segments) and operands;
// offsets are little-endian `u16`s taken modulo the file's size + 1. A missing byte reads as 0.

/// The most edits one input makes.
private let maximumEdits = 16

// MARK: The base stores

/// The files of a store, by path relative to the store directory, in name order.
struct StoreImage: Sendable {
    var files: [(name: String, bytes: [UInt8])]
}

/// The schema of the base store before and after its in-place evolution: every column type,
/// fetch indexes (declared and references), a tombstone column.
enum FuzzSchema {
    static let item = 0
    static let tag = 1
    static let note = 2

    static func columns(evolved: Bool) -> [ColumnSchema] {
        var columns = [
            ColumnSchema(name: "n", type: .int64, isNullable: false, isIndexed: true),
            ColumnSchema(name: "name", type: .string, keepsTombstone: true),
            ColumnSchema(name: "ratio", type: .double),
            ColumnSchema(name: "when", type: .date, isIndexed: true),
            ColumnSchema(name: "blob", type: .binary),
            ColumnSchema(name: "id", type: .uuid),
            ColumnSchema(name: "flag", type: .bool),
            ColumnSchema(name: "price", type: .decimal),
            ColumnSchema(name: "small", type: .int16),
            ColumnSchema(name: "mid", type: .int32),
            ColumnSchema(name: "f", type: .float),
            ColumnSchema(name: "link", type: .uri),
            ColumnSchema(name: "t", type: .transformable),
            ColumnSchema(name: "tag", type: .reference(entity: 1)),
        ]
        if evolved { columns.append(ColumnSchema(name: "extra", type: .int64, isNullable: false)) }
        return columns
    }

    static func schema(evolved: Bool) -> Schema {
        var entities = [
            EntitySchema(id: 0, name: "Item", columns: columns(evolved: evolved)),
            EntitySchema(
                id: 1, name: "Tag",
                columns: [
                    ColumnSchema(name: "label", type: .string, isNullable: false, isIndexed: true),
                    ColumnSchema(name: "weight", type: .int32),
                ]),
        ]
        if evolved {
            entities.append(
                EntitySchema(
                    id: 2, name: "Note", columns: [ColumnSchema(name: "text", type: .string, isIndexed: true)]))
        }
        return try! Schema(entities: entities)
    }

    static func item(_ index: Int, evolved: Bool) -> Row {
        var values: [Value] = [
            .int(Int64(index * 37 % 101)),
            index % 5 == 0 ? .null : .string("item \(index) of the fuzz store, compressible compressible"),
            .double(Double(index) / 3),
            .date(Date(timeIntervalSinceReferenceDate: Double(index * 86_400))),
            index % 3 == 0 ? .null : .data(Data(repeating: UInt8(truncatingIfNeeded: index), count: index % 40)),
            .uuid(UUID(uuid: (UInt8(truncatingIfNeeded: index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
            .bool(index % 2 == 0),
            .decimal(Decimal(index) / 4),
            .int(Int64(index - 50)),
            .int(Int64(index * 1000)),
            .float(Float(index) * 0.5),
            index % 4 == 0 ? .null : .uri(URL(string: "x-strata://store/Item/p\(index)")!),
            .data(Data("transformed \(index)".utf8)),
            .reference(Int64(index % 5 + 1)),
        ]
        if evolved { values.append(.int(Int64(index))) }
        return Row(values)
    }

    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.warmsCacheAfterOpening = false
        configuration.segmentSize = 2048
        configuration.blockSize = 384
        configuration.cacheSize = 1 << 20
        configuration.commitThreads = 1
        configuration.logger.logLevel = .critical
        return configuration
    }
}

/// Builds the two base stores: `crashed` (dropped without closing: records after the checkpoint,
/// an evolved schema, history, a consumer, compaction records) and `closed` (the same, closed).
enum BaseStores {
    static let images: (crashed: StoreImage, closed: StoreImage) = build()

    private static func build() -> (crashed: StoreImage, closed: StoreImage) {
        let directory = scratchRoot() + "/base"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = URL(fileURLWithPath: directory)
        do {
            let configuration = FuzzSchema.configuration()
            try writeFirstVersion(at: url, configuration: configuration)
            try Store.evolveSchema(
                at: url, to: FuzzSchema.schema(evolved: true), defaults: [FuzzSchema.item: [14: .int(7)]],
                configuration: configuration)
            let crashed = try writeEvolvedAndCrash(at: url, configuration: configuration)
            try Store.open(at: url, schema: nil, configuration: configuration).close()
            return (crashed, image(of: directory))
        } catch {
            fatalError("building the base store failed: \(error)")
        }
    }

    /// Commits inserts, updates and deletes under the first schema, registers a history
    /// consumer, writes a checkpoint, deletes old history, compacts and closes.
    private static func writeFirstVersion(at url: URL, configuration: StoreConfiguration) throws {
        let store = try Store.open(at: url, schema: FuzzSchema.schema(evolved: false), configuration: configuration)
        var first = Transaction(author: "fuzz", contextName: "setup")
        for tag in 1...5 {
            let row = Row([.string("tag \(tag)"), tag == 3 ? .null : .int(Int64(tag))])
            first.insert(FuzzSchema.tag, key: Int64(tag), row: row)
        }
        // Enough operations for metadata compressed with LZ4.
        for index in 1...45 {
            first.insert(FuzzSchema.item, key: Int64(index), row: FuzzSchema.item(index, evolved: false))
        }
        _ = try store.commit(first)
        for round in 0..<6 {
            var transaction = Transaction(author: round % 2 == 0 ? nil : "writer \(round)")
            for index in stride(from: 1 + round, through: 39, by: 7) {
                var row = FuzzSchema.item(index + 100, evolved: false)
                row[13] = .reference(Int64(round % 5 + 1))
                transaction.update(FuzzSchema.item, key: Int64(index), row: row, changedColumns: [0, 1, 2, 13])
            }
            if round % 2 == 1 { transaction.delete(FuzzSchema.item, key: Int64(40 + round)) }
            _ = try store.commit(transaction)
        }
        try store.registerHistoryConsumer("fuzz")
        try store.advanceHistoryConsumer("fuzz", to: 3)
        try store.checkpoint()
        var more = Transaction()
        more.delete(FuzzSchema.tag, key: 3)
        for index in 46...55 {
            more.insert(FuzzSchema.item, key: Int64(index), row: FuzzSchema.item(index, evolved: false))
        }
        _ = try store.commit(more)
        try store.deleteHistory(before: 3)
        try store.compact()
        try store.close()
    }

    /// Commits under the evolved schema, writes a checkpoint, commits again and drops the store
    /// without closing it, as a crash would; returns the files, the active segment cut at the
    /// end of its log (the space allocated ahead is zeros that would only slow the fuzzer down).
    private static func writeEvolvedAndCrash(at url: URL, configuration: StoreConfiguration) throws -> StoreImage {
        let store = try Store.open(at: url, schema: FuzzSchema.schema(evolved: true), configuration: configuration)
        var evolved = Transaction(author: "evolved")
        for index in 56...60 {
            evolved.insert(FuzzSchema.item, key: Int64(index), row: FuzzSchema.item(index, evolved: true))
        }
        evolved.insert(FuzzSchema.note, key: 1, row: Row([.string("a note")]))
        evolved.update(FuzzSchema.item, key: 2, row: FuzzSchema.item(202, evolved: true), changedColumns: [0, 14])
        _ = try store.commit(evolved)
        try store.checkpoint()
        for round in 0..<3 {
            var transaction = Transaction(contextName: "after checkpoint")
            transaction.insert(
                FuzzSchema.note, key: Int64(round + 2), row: Row([round == 1 ? .null : .string("note \(round)")]))
            transaction.update(
                FuzzSchema.item, key: Int64(10 + round), row: FuzzSchema.item(300 + round, evolved: true),
                changedColumns: [3])
            transaction.delete(FuzzSchema.item, key: Int64(20 + round))
            _ = try store.commit(transaction)
        }
        let (active, end) = store.state.withLock { ($0.activeFile.path, $0.activeEnd) }
        return image(of: url.path, activeSegment: active, end: end)
    }

    /// Reads every file of the store directory at `path`, the active segment cut at `end`.
    static func image(of path: String, activeSegment: String? = nil, end: Int64 = 0) -> StoreImage {
        var files: [(name: String, bytes: [UInt8])] = []
        for subdirectory in ["", "checkpoints/", "segments/"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path + "/" + subdirectory)) ?? []
            for name in names where name == "manifest" || name.hasSuffix(".ckpt") || name.hasSuffix(".log") {
                let file = path + "/" + subdirectory + name
                var bytes = [UInt8](FileManager.default.contents(atPath: file) ?? Data())
                if file == activeSegment && Int(end) < bytes.count { bytes.removeSubrange(Int(end)...) }
                files.append((subdirectory + name, bytes))
            }
        }
        return StoreImage(files: files.sorted { $0.name < $1.name })
    }
}

/// The directory the fuzzer writes stores to: in memory when `/dev/shm` exists.
func scratchRoot() -> String {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let root = base + "/strata-store-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    return root
}

// MARK: Edits

/// Reads the input front to back; past its end every read is 0.
struct InputReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func u16() -> Int { Int(byte()) | Int(byte()) << 8 }

    mutating func u64() -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(byte()) << (8 * $1) } }

    mutating func take(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    /// An offset into a file of `size` bytes, its end included.
    mutating func offset(in size: Int) -> Int { u16() % (size + 1) }
}

/// Applies one edit read from `input` to `files` (`nil`: the file is removed).
func applyEdit(_ input: inout InputReader, to files: inout [[UInt8]?]) {
    let operation = input.byte() % 10
    let index = Int(input.byte()) % files.count
    guard var bytes = files[index] else { return }
    let offset = input.offset(in: bytes.count)
    switch operation {
    case 0:  // Overwrite up to 32 bytes, growing the file if need be.
        let data = input.take(Int(input.byte()) % 33)
        overwrite(&bytes, at: offset, with: data)
    case 1:  // Truncate.
        bytes.removeSubrange(offset...)
    case 2:  // Insert up to 32 bytes.
        bytes.insert(contentsOf: input.take(Int(input.byte()) % 33), at: offset)
    case 3:  // Set a little-endian integer of 1, 2, 4 or 8 bytes.
        let width = 1 << (input.byte() % 4)
        let value = input.u64()
        overwrite(&bytes, at: offset, with: (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    case 4:  // Add a small signed delta to a little-endian integer of 1, 2, 4 or 8 bytes.
        let width = 1 << (input.byte() % 4)
        let delta = Int64(Int8(bitPattern: input.byte()))
        var value: UInt64 = 0
        for byte in 0..<width where offset + byte < bytes.count { value |= UInt64(bytes[offset + byte]) << (8 * byte) }
        value = value &+ UInt64(bitPattern: delta)
        overwrite(&bytes, at: offset, with: (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    case 5:  // Duplicate a range (up to 4 KiB) at another offset.
        let end = min(bytes.count, offset + input.u16() % 4097)
        let copy = Array(bytes[offset..<end])
        bytes.insert(contentsOf: copy, at: input.offset(in: bytes.count))
    case 6:  // Delete a range.
        bytes.removeSubrange(offset..<min(bytes.count, offset + input.u16() % 4097))
    case 7:  // Flip a bit.
        if offset < bytes.count { bytes[offset] ^= 1 << (input.byte() % 8) }
    case 8:  // Copy a range of another file over this one (a record or section from elsewhere).
        let source = files[Int(input.byte()) % files.count] ?? []
        let start = input.offset(in: source.count)
        let end = min(source.count, start + input.u16() % 4097)
        overwrite(&bytes, at: offset, with: Array(source[start..<end]))
    default:  // Remove the file.
        files[index] = nil
        return
    }
    files[index] = bytes
}

/// Writes `data` over `bytes` from `offset`, growing `bytes` past its end if need be.
func overwrite(_ bytes: inout [UInt8], at offset: Int, with data: [UInt8]) {
    if offset + data.count > bytes.count {
        bytes.append(contentsOf: repeatElement(0, count: offset + data.count - bytes.count))
    }
    bytes.replaceSubrange(offset..<(offset + data.count), with: data)
}

// MARK: Re-sealing

/// Recomputes the checksums (and the manifest's body length) the format defines, wherever the
/// lengths they cover still fit the file, so that damage under them reaches the parsers.
enum Seal {
    static func file(_ name: String, _ bytes: inout [UInt8]) {
        if name == "manifest" {
            manifest(&bytes)
        } else if name.hasSuffix(".ckpt") {
            checkpoint(&bytes)
        } else if name.hasSuffix(".log") {
            segment(&bytes)
        }
    }

    static func u32(_ bytes: [UInt8], _ offset: Int) -> Int {
        bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) }
    }

    static func setU32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    static func checksum(_ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]))) }
    }

    /// `STRATMAN`, version, checksum of the body, body length, body.
    static func manifest(_ bytes: inout [UInt8]) {
        guard bytes.count >= 20 else { return }
        if u32(bytes, 16) > bytes.count - 20 { setU32(&bytes, 16, UInt32(bytes.count - 20)) }
        setU32(&bytes, 12, checksum(bytes, 20..<(20 + u32(bytes, 16))))
    }

    /// The checkpoint's head sections, pages and fetch indexes (``Checkpoint/reseal(_:)``).
    static func checkpoint(_ bytes: inout [UInt8]) {
        Checkpoint.reseal(&bytes)
    }

    /// A 32-byte header, then records: each block's checksum, then the record's.
    static func segment(_ bytes: inout [UInt8]) {
        var position = SegmentFile.headerSize
        while position + RecordHeader.size <= bytes.count {
            let length = u32(bytes, position)
            guard length >= RecordHeader.size, length <= bytes.count - position else { return }
            let end = position + length
            let blockCount = Int(bytes[position + 10]) | Int(bytes[position + 11]) << 8
            var block = position + RecordHeader.size + u32(bytes, position + 12)
            for _ in 0..<blockCount {
                guard block + BlockBuilder.headerSize <= end else { break }
                let stored = u32(bytes, block + 4)
                guard stored <= end - block - BlockBuilder.headerSize else { break }
                let blockEnd = block + BlockBuilder.headerSize + stored
                setU32(&bytes, block, checksum(bytes, (block + 4)..<blockEnd))
                block = blockEnd
            }
            setU32(&bytes, position + 4, checksum(bytes, (position + 8)..<end))
            position = end
        }
    }
}

// MARK: Running

/// Stops the fuzzer with `message`: libFuzzer keeps the input.
func finding(_ message: String) -> Never {
    fatalError("store-file fuzzer finding: \(message)")
}

/// One damaged store's run: the errors seen, checked as they come.
struct Session {
    /// What damage looks like: the codes a damaged store may fail with.
    static let damage: Set<StoreError.Code> = [.corrupt, .unsupportedFormat, .io]

    /// The `corrupt` errors seen, each after what failed.
    var corrupt: [String] = []
    /// Whether any call failed.
    var failed = false

    /// Runs `body`; a `StoreError` of one of `codes` is returned as `nil`, anything else is a finding.
    mutating func attempt<T>(
        _ what: String, allowing extra: Set<StoreError.Code> = [], _ body: () throws -> T
    ) -> T? {
        do {
            return try body()
        } catch let error as StoreError {
            guard Self.damage.union(extra).contains(error.code) else {
                finding("\(what) failed with \(error.code), which no damage explains: \(error)")
            }
            if error.code == .corrupt {
                guard error.path != nil, error.offset != nil else {
                    finding("\(what) failed with a corrupt error that names no file and offset: \(error)")
                }
                corrupt.append("\(what): \(error)")
            }
            failed = true
            return nil
        } catch {
            finding("\(what) threw \(type(of: error)), not a StoreError: \(error)")
        }
    }
}

/// A value of `column`'s type (for a commit to a store whose schema the input may have changed).
func sampleValue(_ column: ColumnSchema, _ index: Int) -> Value {
    switch column.type {
    case .int16, .int32, .int64: return .int(Int64(index))
    case .float: return .float(1.5)
    case .double: return .double(2.5)
    case .decimal: return .decimal(Decimal(index))
    case .bool: return .bool(true)
    case .string: return .string("fuzz \(index)")
    case .date: return .date(Date(timeIntervalSinceReferenceDate: 1_000))
    case .binary, .transformable: return .data(Data([1, 2, 3]))
    case .uuid: return .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8(index & 0xFF))))
    case .uri: return .uri(URL(string: "x-strata://fuzz/\(index)")!)
    case .reference: return .reference(1)
    }
}

/// Reads everything the open `store` holds, every way a caller can; returns the live keys of
/// each entity that the scans saw.
func readEverything(_ store: Store, _ session: inout Session) -> [[PrimaryKey]] {
    var live: [[PrimaryKey]] = []
    for entity in store.schema.entities.prefix(8) {
        let id = entity.id
        _ = store.count(id)
        var keys: [PrimaryKey] = []
        _ = session.attempt("scan") { try store.scan(id) { key, _ in keys.append(key) } }
        live.append(keys)
        let probes = Array(keys.prefix(64)) + [0, -1, (keys.last ?? 0) + 1, Int64.max, Int64.min]
        _ = session.attempt("read keys") { try store.read(id, keys: probes) }
        for key in probes {
            _ = session.attempt("contains") { try store.contains(id, key: key) }
            _ = session.attempt("read") { try store.read(id, key: key) }
            _ = session.attempt("read encoded") {
                if let row = try store.readEncoded(id, key: key) {
                    for column in 0..<row.count { _ = row.value(column) }
                    _ = row.decoded()
                }
            }
        }
        if !entity.columns.isEmpty {
            _ = session.attempt("forEachRow") { try store.forEachRow(id, keys: probes, columns: [0]) { _, _ in } }
        }
        _ = session.attempt("scan encoded") {
            try store.scanEncoded(
                id,
                where: { _, view in
                    if !entity.columns.isEmpty { _ = view.value(0) }
                    return true
                }
            ) { _, row in _ = row.decoded() }
        }
        for column in entity.indexedColumns.prefix(4) {
            _ = session.attempt("index") {
                let found = try store.keys(id, column: column, matching: .range(lower: nil, upper: nil), limit: 64)
                _ = try store.keys(id, column: column, matching: .equal(.null), descending: true, limit: 8)
                _ = try store.countKeys(id, column: column, matching: .range(lower: nil, upper: nil))
                _ = try store.read(id, keys: found)
            }
        }
    }
    _ = session.attempt("history", allowing: [.historyUnavailable]) { try store.history(after: 0, limit: 64) }
    _ = session.attempt("history after the floor", allowing: [.historyUnavailable]) {
        try store.history(after: store.historyFloor, limit: 64)
    }
    _ = store.historyRange
    _ = store.historyConsumers
    _ = store.statistics
    _ = store.segments()
    return live
}

/// Commits one insert a entity (and a delete of a live row), compacts and writes a checkpoint.
func writeAndCompact(_ store: Store, live: [[PrimaryKey]], _ session: inout Session) {
    var transaction = Transaction(author: "fuzzer")
    for entity in store.schema.entities.prefix(4) {
        let key = store.allocateKeys(for: entity.id).lowerBound
        transaction.insert(entity.id, key: key, row: Row(entity.columns.map { sampleValue($0, Int(key & 0xFFFF)) }))
        if let victim = live[entity.id].first { transaction.delete(entity.id, key: victim) }
    }
    // A damaged checkpoint can claim keys past the allocator's.
    _ = session.attempt("commit", allowing: [.keyConflict, .failStopped]) { try store.commit(transaction) }
    _ = session.attempt("compact", allowing: [.failStopped]) { try store.compact() }
    _ = session.attempt("checkpoint", allowing: [.failStopped]) { try store.checkpoint() }
}

/// Verifies, opens, reads, writes, compacts and closes the store at `url`.
func exercise(_ url: URL, readOnly: Bool) -> (session: Session, report: VerificationReport?) {
    var session = Session()
    let report = session.attempt("verify") { try Store.verify(at: url) }
    _ = session.attempt("stored schema") { try Store.storedSchema(at: url) }
    var configuration = FuzzSchema.configuration()
    configuration.readOnly = readOnly
    configuration.createIfMissing = false
    if let store = session.attempt("open", { try Store.open(at: url, schema: nil, configuration: configuration) }) {
        let live = readEverything(store, &session)
        if !readOnly { writeAndCompact(store, live: live, &session) }
        _ = session.attempt("close") { try store.close() }
    }
    if let report, report.isClean, let error = session.corrupt.first {
        finding("verify reports nothing, but the store fails: \(error)")
    }
    return (session, report)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    var input = InputReader(bytes: Array(UnsafeBufferPointer(start: data, count: count)))
    let flags = input.byte()
    let base = flags & 2 == 0 ? BaseStores.images.crashed : BaseStores.images.closed
    var files: [[UInt8]?] = base.files.map(\.bytes)
    var edits = 0
    while !input.isAtEnd && edits < maximumEdits {
        applyEdit(&input, to: &files)
        edits += 1
    }
    if flags & 1 != 0 {
        for index in files.indices where files[index] != nil { Seal.file(base.files[index].name, &files[index]!) }
    }
    let directory = scratchRoot() + "/store"
    try? FileManager.default.removeItem(atPath: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for subdirectory in ["segments", "checkpoints"] {
        try! FileManager.default.createDirectory(
            atPath: directory + "/" + subdirectory, withIntermediateDirectories: true)
    }
    for (index, file) in base.files.enumerated() {
        guard let bytes = files[index] else { continue }
        guard FileManager.default.createFile(atPath: directory + "/" + file.name, contents: Data(bytes)) else {
            fatalError("cannot write \(directory)/\(file.name)")
        }
    }
    let url = URL(fileURLWithPath: directory)
    // To look at what an input makes of the store: a copy of the damaged directory, before any run.
    if let keep = ProcessInfo.processInfo.environment["STORE_FUZZ_KEEP"] {
        try? FileManager.default.removeItem(atPath: keep)
        try! FileManager.default.copyItem(atPath: directory, toPath: keep)
    }
    let readOnly = flags & 4 != 0
    let (session, report) = exercise(url, readOnly: readOnly)
    // The untouched stores are sound: verify must say so (a check that reports sound files is no check).
    if edits == 0, let report, !report.isClean {
        finding("verify reports problems in an untouched store: \(report.problems)")
    }
    // A sound store that took a commit, a compaction and a checkpoint must stay sound.
    if let report, report.isClean, !session.failed, !readOnly {
        var again = Session()
        guard let after = again.attempt("verify after writing", { try Store.verify(at: url) }), after.isClean else {
            finding("a sound store is damaged after a commit, a compaction and a checkpoint: \(again.corrupt)")
        }
        var configuration = FuzzSchema.configuration()
        configuration.createIfMissing = false
        guard
            let store = again.attempt("reopen", { try Store.open(at: url, schema: nil, configuration: configuration) })
        else {
            finding("a sound store does not reopen after a commit, a compaction and a checkpoint: \(again.corrupt)")
        }
        _ = readEverything(store, &again)
        _ = again.attempt("close") { try store.close() }
        if again.failed { finding("reading a sound store again failed: \(again.corrupt)") }
    }
    return 0
}
