import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Damaged files: the error says `corrupt` (or `unsupportedFormat`, `schemaMismatch`) with the
/// file and offset, and a failed open changes nothing in the directory.
@Suite struct CorruptionTests {
    /// Where in a record a byte is flipped.
    enum Spot: String, CaseIterable, Sendable {
        /// The record's length field.
        case length
        /// The record's checksum.
        case checksum
        /// The record's kind.
        case kind
        /// The sequence number.
        case sequence
        /// The first byte after the header (metadata).
        case metadata
        /// The middle of the record (block data).
        case middle
        /// The record's last byte.
        case lastByte

        /// The offset of the spot in a record of `length` bytes.
        func offset(in length: Int) -> Int {
            switch self {
            case .length: return 1
            case .checksum: return 5
            case .kind: return 8
            case .sequence: return RecordHeader.sequenceOffset
            case .metadata: return RecordHeader.size
            case .middle: return length / 2
            case .lastByte: return length - 1
            }
        }
    }

    /// A store of twelve commits in tiny segments, with where each commit's record is.
    struct Fixture {
        let directory = TemporaryDirectory()
        let url: URL
        /// Each commit's record: segment file, offset, length.
        var records: [(path: String, offset: Int64, length: Int)] = []
        /// The live segments' paths in log order.
        var segments: [String] = []
        /// What the store held.
        var contents: StoreContents

        /// Commits twelve transactions; closes the store (writing a checkpoint) when `closing`,
        /// else drops it as a crash would, so that opening replays every segment.
        init(closing: Bool) throws {
            url = directory.store()
            let store = try Store.open(
                at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
            for index in 0..<12 {
                try FaultInjectionTests.commit(index, to: store)
                records.append(
                    store.state.withLock { state in
                        let entry = state.history.last!
                        return (state.files[entry.segment]!.path, entry.offset, entry.length)
                    })
            }
            segments = store.state.withLock { state in state.segmentOrder.map { state.files[$0]!.path } }
            contents = try StoreContents(store)
            if closing { try store.close() }
        }

        /// A record in a sealed segment in the middle of the log.
        var sealedRecord: (path: String, offset: Int64, length: Int) {
            let path = segments[segments.count / 2]
            return records.last { $0.path == path }!
        }
    }

    /// Relaxed commits, no background thread, 1 KiB segments, quiet logs.
    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.segmentSize = 1 << 10
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Flips the bits of the byte at `offset` of the file at `path`.
    static func flipByte(_ path: String, at offset: Int64) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[Int(offset)] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Every file under `path` with its bytes.
    static func snapshot(_ path: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)!
        while let name = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory)
            files[name] =
                isDirectory.boolValue
                ? Data("directory".utf8) : try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        }
        return files
    }

    /// Opens the store at `url`, expecting it to fail; checks the directory did not change and
    /// every descriptor the open took was closed, once.
    static func failingOpen(
        _ url: URL, schema: Schema? = TestSchema.schema, readOnly: Bool = false
    ) throws -> StoreError? {
        let before = try snapshot(url.path)
        let io = FaultyIO()
        var configuration = configuration()
        configuration.readOnly = readOnly
        configuration.io = io
        let error = #expect(throws: StoreError.self) {
            _ = try Store.open(at: url, schema: schema, configuration: configuration)
        }
        #expect(try snapshot(url.path) == before, "the failed open changed files of the store")
        #expect(error?.message.isEmpty == false)
        #expect(io.openFiles == [], "the failed open left files open")
        #expect(io.unmatchedCloses == [], "the failed open closed descriptors twice")
        return error
    }

    /// A flipped byte in a record of a sealed segment: open (writing or read-only) fails with
    /// `corrupt`, naming the segment and an offset in the record, and changes nothing.
    @Test(arguments: Spot.allCases)
    func damagedSealedSegment(spot: Spot) throws {
        let fixture = try Fixture(closing: false)
        let record = fixture.sealedRecord
        #expect(fixture.segments.count >= 4, "the log has several segments")
        try Self.flipByte(record.path, at: record.offset + Int64(spot.offset(in: record.length)))
        for readOnly in [false, true] {
            let error = try Self.failingOpen(fixture.url, readOnly: readOnly)
            #expect(error?.code == .corrupt)
            #expect(error?.path == record.path)
            #expect(
                error?.offset.map { (record.offset..<(record.offset + Int64(record.length))).contains($0) } == true,
                "offset \(String(describing: error?.offset)) is not in the record at \(record.offset)")
        }
    }

    /// A flipped byte inside a block of a sealed segment that a checkpoint covers: open succeeds
    /// (it reads only the log after the checkpoint), and reading a row of that block throws
    /// `corrupt` naming the segment and the block's offset, as does a scan; other rows read.
    @Test func damagedBlockUnderACheckpoint() throws {
        let fixture = try Fixture(closing: true)
        let record = fixture.sealedRecord
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: record.path)))[
            Int(record.offset)..<(Int(record.offset) + record.length)]
        let parsed = try Array(bytes).withUnsafeBytes { try Store.parseRecord(in: $0).get() }
        let op = try #require(
            parsed.ops.first { $0.kind == .insert && $0.entity == 1 && [0, 1, 4].contains($0.key % 5) })
        let span = parsed.blocks[op.block]
        try Self.flipByte(record.path, at: record.offset + Int64(span.offset + span.length / 2))

        let store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
        let error = #expect(throws: StoreError.self) { _ = try store.read(1, key: op.key) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == record.path)
        #expect(error?.offset == record.offset + Int64(span.offset))
        #expect((#expect(throws: StoreError.self) { try store.scan(1) { _, _ in } })?.code == .corrupt)
        #expect(try store.read(1, key: 1) == fixture.contents.rows[1][1])
        try store.close()
    }

    /// A flipped byte in a record of the active segment that valid records follow is `corrupt`,
    /// not a torn tail: opening fails, truncates nothing and changes nothing.
    @Test(arguments: Spot.allCases)
    func damagedRecordInsideTheActiveSegment(spot: Spot) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = Self.configuration()
        configuration.segmentSize = 64 << 20
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var records: [HistoryEntry] = []
        for index in 0..<6 {
            try FaultInjectionTests.commit(index, to: store!)
            records.append(store!.state.withLock { $0.history.last! })
        }
        let path = store!.state.withLock { $0.files[$0.activeSegment]!.path }
        store = nil
        #expect(Set(records.map(\.segment)).count == 1)
        let record = records[3]
        try Self.flipByte(path, at: record.offset + Int64(spot.offset(in: record.length)))
        let error = try Self.failingOpen(url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        #expect(
            error?.offset.map { (record.offset..<(record.offset + Int64(record.length))).contains($0) } == true,
            "offset \(String(describing: error?.offset)) is not in the record at \(record.offset)")
    }

    /// A flipped byte anywhere in the index checkpoint: verify reports it, naming the file and an
    /// offset in it. Opening replays the whole log instead when the byte is in the checkpoint's
    /// head; when it is in a page of the object index or the fetch indexes, which are read after
    /// the open, reading a row of that page throws `corrupt` naming the checkpoint (the fetch
    /// indexes are rebuilt from the rows), and once the store closed the next open replays the
    /// whole log. Either way the store then shows the same rows, indexes and history, commits,
    /// checkpoints and reopens.
    @Test(arguments: [0, 9, 13, 17, 21, 30, -2, -1])
    func damagedCheckpoint(at position: Int) throws {
        let fixture = try Fixture(closing: false)
        var store: Store? = try Store.open(
            at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
        try store!.deleteHistory(before: 4)
        try store!.compact()
        try FaultInjectionTests.commit(12, to: store!)
        let contents = try StoreContents(store!)
        try store!.close()
        store = nil

        let checkpoints = try FileManager.default.contentsOfDirectory(atPath: fixture.url.path + "/checkpoints")
        #expect(checkpoints.count == 1)
        let file = fixture.url.path + "/checkpoints/" + checkpoints[0]
        let size = try FaultInjectionTests.fileSize(file)
        let offset = position >= 0 ? Int64(position) : size / (position == -2 ? 2 : 1) - (position == -1 ? 1 : 0)
        try Self.flipByte(file, at: offset)
        let problems = try Store.verify(at: fixture.url).problems.filter { $0.file == file }
        #expect(!problems.isEmpty)
        #expect(problems.allSatisfy { 0..<size ~= $0.offset }, "\(problems)")

        store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
        do {
            let replayed = try StoreContents(store!)
            #expect(replayed == contents, "\(replayed.difference(from: contents))")
        } catch let error as StoreError {
            #expect(error.code == .corrupt)
            #expect(error.path == file)
            try store!.close()
            store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
            let replayed = try StoreContents(store!)
            #expect(replayed == contents, "\(replayed.difference(from: contents))")
        }
        #expect(try store!.commit(FaultInjectionTests.transaction(13, store!)) == contents.lastSequence + 1)
        let after = try StoreContents(store!)
        try store!.close()
        store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try StoreContents(store!) == after)
        try store!.close()
    }

    /// What replaces the manifest.
    enum ManifestDamage: String, CaseIterable, Sendable {
        /// Random bytes.
        case garbage
        /// An empty file.
        case empty
        /// A newer format version.
        case newerVersion
        /// A flipped byte in the body.
        case flippedBody
        /// Cut after 30 bytes.
        case cut
        /// The manifest of another store with the same schema and segment ids.
        case foreign
    }

    /// A wrong or foreign manifest: open fails with `unsupportedFormat` or `corrupt`, naming the
    /// file, and changes nothing.
    @Test(arguments: ManifestDamage.allCases)
    func damagedManifest(damage: ManifestDamage) throws {
        let fixture = try Fixture(closing: true)
        let manifest = fixture.url.path + "/manifest"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: manifest)))
        var expected: Set<StoreError.Code> = [.corrupt]
        var path = manifest
        switch damage {
        case .garbage:
            var generator = SplitMix64(seed: 5)
            bytes = (0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) }
            expected = [.unsupportedFormat]
        case .empty:
            bytes = []
            expected = [.unsupportedFormat]
        case .newerVersion:
            bytes[8] &+= 1
            expected = [.unsupportedFormat]
        case .flippedBody:
            bytes[bytes.count / 2] ^= 0x10
        case .cut:
            bytes.removeLast(bytes.count - 30)
        case .foreign:
            let other = TemporaryDirectory()
            let store = try Store.open(
                at: other.store(), schema: TestSchema.schema, configuration: Self.configuration())
            try store.close()
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: other.store().path + "/manifest")))
            path = fixture.url.path + "/segments/" + SegmentFile.fileName(1)
            #expect(fixture.segments[0] == path)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: manifest))
        let error = try Self.failingOpen(fixture.url)
        #expect(error.map { expected.contains($0.code) } == true, "\(String(describing: error))")
        #expect(error?.path == path)
        #expect(error?.offset != nil)
        #expect(
            try Self.failingOpen(fixture.url, schema: nil, readOnly: true).map { expected.contains($0.code) } == true)
    }

    /// Opening with a different schema fails with `schemaMismatch`, naming the manifest, and
    /// changes nothing; opening with no schema uses the stored one.
    @Test func differentSchema() throws {
        let fixture = try Fixture(closing: true)
        var columns = TestSchema.schema.entities
        columns[1].columns[2].name = "remarks"
        let renamed = try Schema(entities: columns)
        for schema in [renamed, Torture.schema] {
            let error = try Self.failingOpen(fixture.url, schema: schema)
            #expect(error?.code == .schemaMismatch)
            #expect(error?.path == fixture.url.path + "/manifest")
        }
        let store = try Store.open(at: fixture.url, schema: nil, configuration: Self.configuration())
        #expect(store.schema == TestSchema.schema)
        #expect(try StoreContents(store) == fixture.contents)
        try store.close()
    }
}
