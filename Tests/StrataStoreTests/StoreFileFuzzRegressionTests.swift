import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// What the store-file fuzzer (`make fuzz-store`) found, each rebuilt on a small store: damage
/// under a valid checksum (the fuzzer recomputes checksums after its edits) that crashed the
/// store, or that the store refused while `Store.verify` reported nothing. Each now fails with
/// `corrupt`, naming the file and offset, or is ignored as a damaged checkpoint is, and verify
/// reports it.
@Suite struct StoreFileFuzzRegressionTests {
    /// A closed store of twelve commits in 1 KiB segments, with its checkpoint.
    struct Fixture {
        let directory = TemporaryDirectory()
        let url: URL
        /// What the store held.
        let contents: StoreContents

        init() throws {
            url = directory.store()
            let store = try Store.open(
                at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
            for index in 0..<12 { try FaultInjectionTests.commit(index, to: store) }
            contents = try StoreContents(store)
            try store.close()
        }

        /// The checkpoint file's path.
        var checkpoint: String {
            get throws {
                let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
                return url.path + "/checkpoints/" + names[0]
            }
        }

        /// Opens the store.
        func open() throws -> Store {
            try Store.open(at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
        }
    }

    /// Applies `edit` to the checkpoint at `path` (given its layout) and recomputes every
    /// checksum, as the fuzzer's re-sealing does.
    static func editCheckpoint(_ path: String, _ edit: (inout [UInt8], Checkpoint.Layout) throws -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try edit(&bytes, Checkpoint.Layout(bytes))
        Checkpoint.reseal(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Where block `number`'s entry (14 bytes: `u32` segment, offset, length, `u16` entity)
    /// starts in the checkpoint's block table, in the page its directory places.
    static func blockEntry(_ number: Int, _ bytes: [UInt8], _ layout: Checkpoint.Layout) throws -> Int {
        let page = number / BlockTable.capacity
        try #require(page < layout.blockPages.count)
        let place = try #require(layout.blockPages[page], "block \(number) was dropped")
        return place.lowerBound + BlockTablePage.entryBytes * (number % BlockTable.capacity)
    }

    /// Stores `value` little-endian at `offset` of `bytes`.
    static func store<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }

    /// Where the first entry of the history directory (in the header section) starts.
    static func firstHistoryEntry(_ bytes: [UInt8], _ layout: Checkpoint.Layout) -> Int {
        bytes.withUnsafeBytes { raw in
            // The header section: position, sequences, next keys, segments, then the history.
            var header = BinaryReader(raw, position: layout.sections[0].lowerBound + 4 + 8 * 3)
            for _ in 0..<((try? header.varint()) ?? 0) { _ = try? header.varint() }
            let segments = Int((try? header.varint()) ?? 0)
            header.position += segments * (4 + 8 * 4)
            _ = try? header.varint()
            return header.position
        }
    }

    /// The problems `Store.verify` reports in `file`.
    static func problems(_ url: URL, in file: String) throws -> [VerificationProblem] {
        try Store.verify(at: url).problems.filter { $0.file == file }
    }

    /// Fetch indexes that do not parse under a valid checksum: the thread that rebuilt them from
    /// the rows held the store, so a store released without `close()` kept its lock file until
    /// the rebuild ended, and opening it again at once failed with `locked`. Now the first that
    /// needs the indexes rebuilds them, and the released store is unlocked at once.
    @Test func unparsableFetchIndexesKeepNoReleasedStoreLocked() throws {
        let fixture = try Fixture()
        try Self.editCheckpoint(try fixture.checkpoint) { bytes, layout in
            let indexes = try #require(layout.fetchIndexes.first { !$0.isEmpty }, "the schema has fetch indexes")
            for offset in indexes { bytes[offset] = 0xFF }
        }
        for _ in 0..<100 {
            var store: Store? = try fixture.open()
            #expect(store != nil)
            store = nil
        }
        let store = try fixture.open()
        #expect(try StoreContents(store) == fixture.contents, "the indexes are rebuilt from the rows")
        try store.close()
    }

    /// A place in the checkpoint's header section past what the store keeps it in.
    enum HeaderDamage: CaseIterable {
        /// The log position past `Int64.max`.
        case positionPastInt64
        /// The first history entry's offset past the first 4 GiB of its segment, where the writer
        /// places no record (the history directory keeps places as `UInt32`s).
        case historyOffsetPast4GiB
    }

    /// A checkpoint whose header names a place past what the store keeps it in (checksum valid)
    /// trapped converting it; now the checkpoint fails to decode with `corrupt` at its header
    /// section, verify reports it, and opening replays the whole log, history included.
    @Test(arguments: HeaderDamage.allCases)
    func checkpointHeaderPlacePastItsRange(damage: HeaderDamage) throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        try Self.editCheckpoint(file) { bytes, layout in
            switch damage {
            case .positionPastInt64:
                // The header section: u32 segment, u64 offset.
                Self.store(UInt64.max, at: layout.sections[0].lowerBound + 4, in: &bytes)
            case .historyOffsetPast4GiB:
                // The first entry: u64 sequence, u32 segment, u64 offset.
                Self.store(UInt64(UInt32.max) + 1, at: Self.firstHistoryEntry(bytes, layout) + 8 + 4, in: &bytes)
            }
        }
        let error = #expect(throws: StoreError.self) {
            _ = try StoreFiles.openCheckpoint(file)
        }
        #expect(error?.code == .corrupt)
        #expect(error?.path == file)
        #expect(error?.offset == Int64(Checkpoint.prefixSize))
        #expect(try !Self.problems(fixture.url, in: file).isEmpty)
        let store = try fixture.open()
        #expect(try StoreContents(store) == fixture.contents)
        #expect(try store.history(after: 0).count == 12)
        try store.close()
    }

    /// An object-index entry holding only a row start, no block (`1 << 48`), trapped computing
    /// its block number. Now reading the page that holds it fails with `corrupt` at the page,
    /// verify reports it, and after the store closes the next open replays the whole log.
    @Test func checkpointLocationWithoutABlock() throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        var entry = 0
        try Self.editCheckpoint(file) { bytes, _ in
            // Employee 2's location in the entity's first page.
            let page = Checkpoint.rewritePage(&bytes, entity: TestSchema.employee, page: 0) {
                $0.storeBytes(of: UInt64(1) << 48, toByteOffset: 8 * 2, as: UInt64.self)
            }
            entry = try #require(page).lowerBound
        }
        #expect(try Self.problems(fixture.url, in: file).contains { $0.offset == Int64(entry) })
        var store = try fixture.open()
        let error = #expect(throws: StoreError.self) { _ = try store.read(TestSchema.employee, key: 2) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == file)
        #expect(error?.offset == Int64(entry))
        try store.close()
        store = try fixture.open()
        #expect(try StoreContents(store) == fixture.contents)
        try store.close()
    }

    /// The block table entry of live rows naming another entity: the store read the rows with
    /// that entity's codec and verify compared only row places. Now a read throws `corrupt`
    /// naming the segment and the block, and verify reports the checkpoint.
    @Test func checkpointBlockOfAnotherEntity() throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        var store = try fixture.open()
        let (location, block) = try store.state.withLock { state in
            let location = try state.entities[TestSchema.employee].location(of: 1)
            return (location, try state.blocks.location(Int(location.block)))
        }
        try store.close()
        try Self.editCheckpoint(file) { bytes, layout in
            // 14 bytes a block: u32 segment, offset, length, u16 entity.
            let entry = try Self.blockEntry(Int(location.block), bytes, layout)
            Self.store(UInt16(TestSchema.department), at: entry + 12, in: &bytes)
        }
        store = try fixture.open()
        let error = #expect(throws: StoreError.self) { _ = try store.read(TestSchema.employee, key: 1) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == fixture.url.path + "/segments/" + SegmentFile.fileName(block.segment))
        #expect(error?.offset == Int64(block.offset))
        try store.close()
        #expect(try !Self.problems(fixture.url, in: file).isEmpty)
    }

    /// A block table entry whose length runs past its segment: a read would allocate what it
    /// says (up to 4 GiB). Now opening ignores the checkpoint and replays the log.
    @Test func checkpointBlockPastItsSegment() throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        try Self.editCheckpoint(file) { bytes, layout in
            Self.store(UInt32.max, at: try Self.blockEntry(0, bytes, layout) + 8, in: &bytes)
        }
        #expect(try !Self.problems(fixture.url, in: file).isEmpty)
        let store = try fixture.open()
        #expect(try StoreContents(store) == fixture.contents)
        try store.close()
    }

    /// A block table entry moved by a byte, of a block no live row is in (a transaction's prior
    /// rows): scans read every block of the table, and failed, while verify compared only the
    /// places of live rows. Now verify reports the stray block.
    @Test func checkpointStrayBlock() throws {
        let fixture = try Fixture()
        var store = try fixture.open()
        // Every employee of the first commit deleted: its block holds no live row.
        var transaction = Transaction()
        for key in 1...5 where try store.contains(TestSchema.employee, key: Int64(key)) {
            transaction.delete(TestSchema.employee, key: Int64(key))
        }
        try store.commit(transaction)
        let (live, kept) = try store.state.withLock { state in
            let blocks = try state.blocks.loaded()
            return (
                Set(
                    try state.entities.flatMap { index in
                        try (1..<index.keyLimit).map { try index.location(of: $0) }.filter(\.isPresent).map(\.block)
                    }),
                // The blocks of live segments, which the checkpoint lists.
                blocks.indices.filter { state.files[blocks[$0].segment] != nil }.map { UInt32($0) }
            )
        }
        try store.close()
        let file = try fixture.checkpoint
        let stray = try #require(kept.first { !live.contains($0) })
        try Self.editCheckpoint(file) { bytes, layout in
            let offset = try Self.blockEntry(Int(stray), bytes, layout) + 4
            let old = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            Self.store(old + 1, at: offset, in: &bytes)
        }
        store = try fixture.open()
        #expect(throws: StoreError.self) {
            for entity in TestSchema.schema.entities { try store.scan(entity.id) { _, _ in } }
        }
        try store.close()
        let problems = try Self.problems(fixture.url, in: file)
        #expect(problems.contains { $0.message.contains("block table") }, "\(problems)")
    }

    /// An update whose prior row (kept for history) points at a slot past its block, under a
    /// valid record checksum: reading history failed while verify checked only the operation's
    /// own row. Now verify reports the record.
    @Test func priorRowPastItsBlock() throws {
        let fixture = try Fixture()
        var store = try fixture.open()
        let entry = store.state.withLock { $0.history[3] }
        let path = store.state.withLock { $0.files[entry.segment]!.path }
        try store.close()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let range = Int(entry.offset)..<(Int(entry.offset) + entry.length)
        let record = try Array(bytes[range]).withUnsafeBytes { try Store.parseRecord(in: $0).get() }
        var ops = record.ops
        let update = try #require(ops.firstIndex { $0.kind == .update && $0.priorBlock >= 0 })
        ops[update].priorSlot = 100
        let original = Array(bytes[range])
        var rewritten = RecordBuilder.encode(
            kind: .transaction, ops: ops, blockBytes: 0, timestamp: record.timestamp, author: record.author,
            contextName: record.contextName, bundleID: record.bundleID, processID: record.processID,
            cursors: record.cursors
        ) { output in
            record.blocks.map { span in
                let start = output.count
                output += original[span.offset..<(span.offset + span.length)]
                return BlockSpan(offset: start, length: span.length, entity: span.entity)
            }
        }.bytes
        RecordHeader.seal(&rewritten, sequence: record.sequence)
        #expect(rewritten.count == entry.length, "the slot's varint keeps its width")
        bytes.replaceSubrange(range, with: rewritten)
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        store = try fixture.open()
        let error = #expect(throws: StoreError.self) { _ = try store.history(after: 0) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        #expect(error?.offset.map { range.contains(Int($0)) } == true)
        try store.close()
        #expect(try Self.problems(fixture.url, in: path).contains { $0.offset == entry.offset })
    }

    /// A checkpoint whose row sizes are larger than the rows (checksum valid), followed by an
    /// update of such a row: the segment's live bytes went below zero and writing the next
    /// checkpoint trapped converting them. Now they are written as zero and the store reopens.
    @Test func checkpointRowSizesPastTheRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
        for index in 0..<6 { try FaultInjectionTests.commit(index, to: store!) }
        try store!.checkpoint()
        try FaultInjectionTests.commit(6, to: store!)
        let contents = try StoreContents(store!)
        store = nil  // A crash: the update of commit 6 is replayed over the checkpoint.
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
        try Self.editCheckpoint(url.path + "/checkpoints/" + names[0]) { bytes, _ in
            // The sizes follow the page's locations.
            let page = Checkpoint.rewritePage(&bytes, entity: TestSchema.employee, page: 0) { page in
                for key in 1..<64 {
                    page.storeBytes(of: UInt32.max, toByteOffset: 8 * IndexPage.capacity + 4 * key, as: UInt32.self)
                }
            }
            try #require(page != nil)
        }
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
        #expect(try StoreContents(store!) == contents)
        try store!.checkpoint()
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
        #expect(try StoreContents(store!) == contents)
        try store!.close()
    }

    /// A manifest whose newest sequence is `UInt64.max` (checksum valid): the next commit
    /// trapped adding one to it. Now opening fails with `corrupt` naming the manifest and the
    /// field, and verify reports it.
    @Test func manifestSequencePastTheCeiling() throws {
        let fixture = try Fixture()
        let path = fixture.url.path + "/manifest"
        var manifest = try Manifest.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        manifest.lastSequence = .max
        try Data(manifest.encode()).write(to: URL(fileURLWithPath: path))
        let error = try CorruptionTests.failingOpen(fixture.url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        #expect(error?.offset.map { $0 > 20 } == true)
        #expect(try !Self.problems(fixture.url, in: path).isEmpty)
    }

    /// A record of a sealed segment whose sequence is `UInt64.max`, its checksum recomputed:
    /// replaying it made the store's newest sequence one no commit can follow. Now opening fails
    /// with `corrupt` naming the segment and the record's sequence field.
    @Test func recordSequencePastTheCeiling() throws {
        let fixture = try CorruptionTests.Fixture(closing: false)
        let record = fixture.sealedRecord
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: record.path)))
        RecordHeader.seal(&bytes, at: Int(record.offset), sequence: .max)
        try Data(bytes).write(to: URL(fileURLWithPath: record.path))
        let error = try CorruptionTests.failingOpen(fixture.url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == record.path)
        #expect(error?.offset == record.offset + Int64(RecordHeader.sequenceOffset))
        #expect(try Store.verify(at: fixture.url).problems.contains { $0.file == record.path })
    }

    /// A checkpoint whose history directory gives a record one byte shorter than it is: reading
    /// history failed with `corrupt` while verify compared only the indexes. Now verify reports
    /// the checkpoint's history entry.
    @Test func checkpointHistoryEntryOfNoRecord() throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        try Self.editCheckpoint(file) { bytes, layout in
            // The first entry: u64 sequence, u32 segment, u64 offset, u32 length.
            let lengthOffset = Self.firstHistoryEntry(bytes, layout) + 8 + 4 + 8
            let length = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: lengthOffset, as: UInt32.self) }
            Self.store(length - 1, at: lengthOffset, in: &bytes)
        }
        let store = try fixture.open()
        let error = #expect(throws: StoreError.self) { _ = try store.history(after: 0) }
        #expect(error?.code == .corrupt)
        try store.close()
        let problems = try Self.problems(fixture.url, in: file)
        #expect(problems.contains { $0.message.contains("history") }, "\(problems)")
    }

    // Found by reading the parsers while writing the fuzzer, before it ran: damage of the same
    // kind (a valid checksum over values the store indexes or allocates by).

    /// A record operating on an entity the schema does not have, or on a key that is not
    /// positive or past 2^62, under a valid checksum: replay indexed arrays by both (and added one
    /// to the key) and trapped. Now opening fails with `corrupt` naming the segment and the record.
    @Test(
        arguments: [(7, 1), (TestSchema.employee, 0), (TestSchema.employee, -3), (TestSchema.employee, .max)]
            as [(Int, Int64)])
    func operationOutsideTheSchema(entity: Int, key: Int64) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: CorruptionTests.configuration())
        for index in 0..<3 { try FaultInjectionTests.commit(index, to: store!) }
        let (path, end, sequence) = store!.state.withLock { ($0.activeFile.path, $0.activeEnd, $0.lastSequence) }
        store = nil
        let op = RecordOp(kind: .delete, entity: entity, key: key, block: -1, slot: 0, size: 0, changedColumns: [])
        var record = RecordBuilder.encode(
            kind: .transaction, ops: [op], blockBytes: 0, timestamp: Date(), author: nil, contextName: nil,
            bundleID: nil, processID: nil, cursors: [:]
        ) { _ in [] }.bytes
        RecordHeader.seal(&record, sequence: sequence + 1)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(end))
        try handle.write(contentsOf: record)
        try handle.close()
        let error = try CorruptionTests.failingOpen(url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        #expect(error?.offset == end)
    }

    /// An LZ4 length no block of the stored size decompresses to (up to 4 GiB): the memory was
    /// allocated before liblz4 refused the block. Now it is refused first.
    @Test func lz4LengthBeyondTheFormatsRatio() {
        let literal: [UInt8] = [0x10, 0x41]  // One literal byte.
        #expect(literal.withUnsafeBytes { LZ4.decompress($0, rawCount: 1 << 31) } == nil)
        #expect(literal.withUnsafeBytes { LZ4.decompress($0, rawCount: 1) } == [0x41])
        #expect(!LZ4.canExpand(2, to: 3 * LZ4.maximumRatio))
    }

    /// A manifest whose schema gives two entities the same id, its checksum recomputed:
    /// `Schema` refused it with `invalidSchema`, naming no file. Now opening fails with `corrupt`
    /// naming the manifest and where the schema starts.
    @Test func manifestSchemaOfRepeatedIDs() throws {
        let fixture = try Fixture()
        let path = fixture.url.path + "/manifest"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let name = Array("Employee".utf8)
        let at = try #require(
            (2..<(bytes.count - name.count)).first {
                Array(bytes[$0..<($0 + name.count)]) == name && bytes[$0 - 1] == UInt8(name.count)
            })
        #expect(bytes[at - 2] == UInt8(TestSchema.employee))
        bytes[at - 2] = UInt8(TestSchema.department)
        Self.store(CRC32C.mask(CRC32C.checksum(Array(bytes[20...]))), at: 12, in: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = try CorruptionTests.failingOpen(fixture.url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        // The schema starts after the manifest's 20-byte header and the store's UUID.
        let schemaStart: Int64 = 20 + 16
        #expect(error?.offset == schemaStart)
    }

    /// A manifest whose schema history says an earlier version had more columns than the
    /// current schema, checksum valid: building that version's codec trapped on a reversed
    /// range. Now opening fails with `corrupt` naming the manifest.
    @Test func manifestSchemaHistoryWiderThanTheSchema() throws {
        let fixture = try Fixture()
        var entities = TestSchema.schema.entities
        entities[TestSchema.employee].columns.append(ColumnSchema(name: "extra", type: .int64))
        try Store.evolveSchema(
            at: fixture.url, to: try Schema(entities: entities), configuration: CorruptionTests.configuration())
        let path = fixture.url.path + "/manifest"
        var manifest = try Manifest.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        #expect(manifest.schemaHistory.columnCounts == [[2, 4]])
        manifest.schemaHistory.columnCounts = [[2, 9]]
        try Data(manifest.encode()).write(to: URL(fileURLWithPath: path))
        let error = try CorruptionTests.failingOpen(fixture.url, schema: nil)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
    }

    /// A manifest whose next key of an entity is `Int64.max` or 0, checksum valid: allocating a
    /// key after it trapped or handed out a key that is not positive. Now opening fails with
    /// `corrupt` naming the manifest.
    @Test(arguments: [Int64.max, 0])
    func manifestNextKeyOutOfRange(next: Int64) throws {
        let fixture = try Fixture()
        let path = fixture.url.path + "/manifest"
        var manifest = try Manifest.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        manifest.nextKeys[TestSchema.employee] = next
        try Data(manifest.encode()).write(to: URL(fileURLWithPath: path))
        let error = try CorruptionTests.failingOpen(fixture.url)
        #expect(error?.code == .corrupt)
        #expect(error?.path == path)
        #expect(error?.offset.map { $0 > 20 } == true)
    }

    /// A checkpoint whose object index points a department at an employee's row: reading it by
    /// keys with a projection indexed the department's column flags with the employee block's
    /// columns and trapped, and single reads returned a row of the other entity. Now every read
    /// throws `corrupt` naming the segment and the block, and verify reports the checkpoint.
    @Test func checkpointRowOfAnotherEntity() throws {
        let fixture = try Fixture()
        let file = try fixture.checkpoint
        var store = try fixture.open()
        let (employee, block) = try store.state.withLock { state in
            let location = try state.entities[TestSchema.employee].location(of: 1)
            return (location, try state.blocks.location(Int(location.block)))
        }
        try store.close()
        try Self.editCheckpoint(file) { bytes, _ in
            // Department 1's entry in the entity's first page, u64 locations by key.
            let page = Checkpoint.rewritePage(&bytes, entity: TestSchema.department, page: 0) {
                $0.storeBytes(of: employee.raw, toByteOffset: 8, as: UInt64.self)
            }
            try #require(page != nil)
        }
        #expect(try !Self.problems(fixture.url, in: file).isEmpty)
        store = try fixture.open()
        let segment = fixture.url.path + "/segments/" + SegmentFile.fileName(block.segment)
        let reads: [() throws -> Void] = [
            { _ = try store.read(TestSchema.department, key: 1) },
            { try store.forEachRow(TestSchema.department, keys: [1], columns: [0]) { _, _ in } },
            { _ = try store.readEncoded(TestSchema.department, key: 1) },
        ]
        for read in reads {
            let error = #expect(throws: StoreError.self) { try read() }
            #expect(error?.code == .corrupt)
            #expect(error?.path == segment)
            #expect(error?.offset == Int64(block.offset))
        }
        try store.close()
    }
}
