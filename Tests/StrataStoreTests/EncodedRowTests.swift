import Foundation
import StrataTestSupport
import StrataSynchronization
import Synchronization
import Testing
@testable import StrataStore

/// Rows read as their encoded bytes (what objects and the row cache keep) give back every value
/// the decoded read gives, column by column and whole, by key, by keys and by scan, before and
/// after reopening, and for rows written before a column was added (its default pads them).
@Suite struct EncodedRowTests {
    /// Every column of `encoded`, read one by one, and its decoded form equal `expected`.
    static func check(_ encoded: EncodedRow?, _ expected: Row?, _ stage: Comment) {
        guard let encoded, let expected else {
            #expect(encoded == nil && expected == nil, "\(stage): one of the rows is missing")
            return
        }
        #expect(encoded.count == expected.count, "\(stage): column count")
        let columns = Row((0..<encoded.count).map { encoded.value($0) })
        #expect(
            RoundTripTests.identical(columns, expected),
            "\(stage) by column: \(RoundTripTests.differences(columns, expected))")
        #expect(
            RoundTripTests.identical(encoded.decoded(), expected),
            "\(stage) decoded: \(RoundTripTests.differences(encoded.decoded(), expected))")
    }

    /// Every AllTypes row through the three encoded reads.
    static func checkContents(_ store: Store, _ stage: String) throws {
        let keys = Array(1...Int64(RoundTripTests.rows.count)) + [99]
        for key in keys {
            check(
                try store.readEncoded(RoundTripTests.allTypes, key: key),
                try store.read(RoundTripTests.allTypes, key: key), "\(stage) key \(key)")
        }
        for (key, row) in zip(keys, try store.readEncoded(RoundTripTests.allTypes, keys: keys.reversed()).reversed()) {
            check(row, try store.read(RoundTripTests.allTypes, key: key), "\(stage) keys \(key)")
        }
        // The in-place views give every value too; only the rows `accept` takes are copied.
        var seen: [PrimaryKey] = []
        func evenKeys(_ key: PrimaryKey, _ view: EncodedRowView) throws -> Bool {
            seen.append(key)
            checkView(view, RoundTripTests.rows[Int(key) - 1], "\(stage) view \(key)")
            return key % 2 == 0
        }
        let even = try store.readEncoded(RoundTripTests.allTypes, keys: keys, where: evenKeys)
        for (key, row) in zip(keys, even) {
            check(
                row, key % 2 == 0 ? try store.read(RoundTripTests.allTypes, key: key) : nil, "\(stage) even keys \(key)"
            )
        }
        #expect(seen.sorted() == Array(keys.dropLast()), "\(stage): readEncoded(where:) sees every live row")
        var byKeys: [PrimaryKey] = []
        seen = []
        try store.forEachEncodedRow(RoundTripTests.allTypes, keys: keys, where: evenKeys) { key, row in
            byKeys.append(key)
            check(row, RoundTripTests.rows[Int(key) - 1], "\(stage) forEach \(key)")
        }
        #expect(seen.sorted() == Array(keys.dropLast()), "\(stage): forEachEncodedRow skips the missing key only")
        #expect(
            byKeys.sorted() == keys.dropLast().filter { $0 % 2 == 0 },
            "\(stage): forEachEncodedRow passes the rows taken only")
        var scanned: [PrimaryKey] = []
        seen = []
        try store.scanEncoded(RoundTripTests.allTypes, where: evenKeys) { key, row in
            scanned.append(key)
            check(row, RoundTripTests.rows[Int(key) - 1], "\(stage) scan \(key)")
        }
        #expect(seen.sorted() == Array(keys.dropLast()), "\(stage): scanEncoded sees every live row")
        #expect(
            scanned.sorted() == keys.dropLast().filter { $0 % 2 == 0 },
            "\(stage): scanEncoded passes the rows taken only")
        #expect(throws: StoreError.self) { try store.scanEncoded(42, where: { _, _ in true }) { _, _ in } }
    }

    /// Every column of `view` equals `expected`'s.
    static func checkView(_ view: EncodedRowView, _ expected: Row, _ stage: Comment) {
        let columns = Row(expected.values.indices.map { view.value($0) })
        #expect(
            RoundTripTests.identical(columns, expected), "\(stage): \(RoundTripTests.differences(columns, expected))")
    }

    @Test func encodedReadsGiveTheDecodedValuesBeforeAndAfterReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.blockSize = 4096
        var store: Store? = try Store.open(at: url, schema: RoundTripTests.schema, configuration: configuration)
        var transaction = Transaction()
        for (key, row) in zip(
            store!.allocateKeys(for: RoundTripTests.allTypes, count: RoundTripTests.rows.count), RoundTripTests.rows)
        {
            transaction.insert(RoundTripTests.allTypes, key: key, row: row)
        }
        try store!.commit(transaction)
        try Self.checkContents(store!, "before close")
        try store!.close()
        store = try Store.open(at: url, schema: RoundTripTests.schema, configuration: configuration)
        try Self.checkContents(store!, "after reopen")
        try store!.close()
    }

    @Test func aRowWrittenBeforeAColumnWasAddedReadsTheDefault() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let old = try Schema(entities: [
            EntitySchema(id: 0, name: "Item", columns: [ColumnSchema(name: "name", type: .string)])
        ])
        var store: Store? = try Store.open(at: url, schema: old, configuration: TestSchema.configuration())
        var transaction = Transaction()
        transaction.insert(0, key: 1, row: Row([.string("old é")]))
        try store!.commit(transaction)
        try store!.close()
        let new = try Schema(entities: [
            EntitySchema(
                id: 0, name: "Item",
                columns: [ColumnSchema(name: "name", type: .string), ColumnSchema(name: "rank", type: .int64)])
        ])
        store = nil
        #expect(
            try Store.evolveSchema(
                at: url, to: new, defaults: [0: [1: .int(7)]], configuration: TestSchema.configuration()))
        store = try Store.open(at: url, schema: new, configuration: TestSchema.configuration())
        let encoded = try #require(try store!.readEncoded(0, key: 1))
        #expect(encoded.count == 2)
        #expect(encoded.value(0) == .string("old é"))
        #expect(encoded.value(1) == .int(7))
        #expect(encoded.decoded() == Row([.string("old é"), .int(7)]))
        var viewed: [Value] = []
        _ = try store!.readEncoded(0, keys: [1]) { _, view in
            viewed = [view.value(0), view.value(1)]
            return false
        }
        #expect(viewed == [.string("old é"), .int(7)], "a view of the old row reads the default too")
        try store!.close()
    }

    /// Rows of more than 64 KiB keep no offset table and walk their columns; rows just under
    /// keep one; both read every column as the decoded read does, nil columns included.
    @Test func rowsOnEitherSideOfTheOffsetTableLimitReadEveryColumn() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let schema = try Schema(entities: [
            EntitySchema(
                id: 0, name: "Blob",
                columns: [
                    ColumnSchema(name: "name", type: .string), ColumnSchema(name: "data", type: .binary),
                    ColumnSchema(name: "note", type: .string), ColumnSchema(name: "rank", type: .int64),
                ])
        ])
        let store = try Store.open(at: url, schema: schema, configuration: TestSchema.configuration())
        // Bitmap, name and the length prefixes around a 65,500-byte value: under 65,536 bytes;
        // then 70,000 bytes, over it; then a nil value before the last column.
        let rows = [
            Row([.string("short"), .data(Data(repeating: 7, count: 65_500)), .string("after"), .int(-3)]),
            Row([.string("long"), .data(Data(repeating: 9, count: 70_000)), .string("after é"), .int(1 << 40)]),
            Row([.string("gap"), .null, .string("after a nil"), .int(5)]),
        ]
        let keys = Array(store.allocateKeys(for: 0, count: rows.count))
        var transaction = Transaction()
        for (key, row) in zip(keys, rows) { transaction.insert(0, key: key, row: row) }
        try store.commit(transaction)
        for (key, row) in zip(keys, rows) {
            Self.check(try store.readEncoded(0, key: key), row, "row \(key)")
        }
        try store.close()
    }

    /// The rows a scan or a read by keys copies (fewer than half of each block's rows: see
    /// ``rowsTakenFromMostOfABlockStayInPlaceAndOutliveItsCachingAndCompaction()``) share heap
    /// blocks of about 4 KiB, small rows one after the other and a row of another format (written
    /// before the schema evolved) or too large in a block of its own; each reads every value it
    /// was written with after the scan returned and after the rows around it are gone. Rows read
    /// for a cache (by keys, without a filter) and a row read on its own keep a block each.
    @Test func rowsAFetchCopiesShareBlocksAndOutliveTheirNeighbours() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let old = try Schema(entities: [
            EntitySchema(
                id: 0, name: "Item",
                columns: [ColumnSchema(name: "name", type: .string), ColumnSchema(name: "data", type: .binary)])
        ])
        var store: Store? = try Store.open(at: url, schema: old, configuration: TestSchema.configuration())
        func row(_ key: PrimaryKey) -> Row {
            // Every tenth row is larger than a quarter of a shared block; one is past 64 KiB.
            let size = key == 25 ? 70_000 : key % 10 == 0 ? 1_500 : Int(key % 7) * 20
            return Row([.string("item \(key) é"), .data(Data(repeating: UInt8(key & 0xFF), count: size))])
        }
        var transaction = Transaction()
        for key in store!.allocateKeys(for: 0, count: 60) { transaction.insert(0, key: key, row: row(key)) }
        try store!.commit(transaction)
        try store!.close()
        store = nil
        let new = try Schema(entities: [
            EntitySchema(
                id: 0, name: "Item",
                columns: [
                    ColumnSchema(name: "name", type: .string), ColumnSchema(name: "data", type: .binary),
                    ColumnSchema(name: "rank", type: .int64),
                ])
        ])
        #expect(
            try Store.evolveSchema(
                at: url, to: new, defaults: [0: [2: .int(7)]], configuration: TestSchema.configuration()))
        store = try Store.open(at: url, schema: new, configuration: TestSchema.configuration())
        var later = Transaction()
        for key in store!.allocateKeys(for: 0, count: 40) {
            later.insert(0, key: key, row: Row(row(key).values + [.int(key)]))
        }
        try store!.commit(later)
        func expected(_ key: PrimaryKey) -> Row { Row(row(key).values + [.int(key <= 60 ? 7 : key)]) }

        var scanned: [(PrimaryKey, EncodedRow)] = []
        try store!.scanEncoded(0, where: { key, _ in key % 3 == 0 }) { key, row in scanned.append((key, row)) }
        var byKeys: [(PrimaryKey, EncodedRow)] = []
        try store!.forEachEncodedRow(0, keys: Array(1...100), where: { key, _ in key % 3 == 1 }) { key, row in
            byKeys.append((key, row))
        }
        #expect(scanned.count == 33 && byKeys.count == 34)
        for (rows, stage) in [(scanned, "scan"), (byKeys, "by keys")] {
            let blocks = Dictionary(grouping: rows) { ObjectIdentifier($0.1.storage) }
            for (key, row) in rows {
                #expect(row.storage.header.block == nil, "\(stage) \(key): copied, not in place")
                let size = EncodedRow.size(
                    byteCount: row.byteCount, storedColumns: row.storage.header.format.codec.storedColumns)
                let shared = blocks[ObjectIdentifier(row.storage)]!.count > 1
                #expect(
                    shared == (size <= EncodedRowArena.blockCapacity / 4),
                    "\(stage) \(key): \(size) bytes, shared \(shared)")
                let formats = Set(
                    blocks[ObjectIdentifier(row.storage)]!.map { ObjectIdentifier($0.1.storage.header.format) })
                #expect(formats.count == 1, "\(stage) \(key): one format a block")
            }
            #expect(blocks.count < rows.count / 3, "\(stage): \(blocks.count) blocks for \(rows.count) rows")
            // The rows read back after the scan, then with every other row of the scan gone.
            for (key, row) in rows { Self.check(row, expected(key), "\(stage) \(key)") }
        }
        let kept = scanned.filter { $0.0 % 10 == 3 }
        scanned = []
        byKeys = []
        for (key, row) in kept { Self.check(row, expected(key), "kept \(key)") }
        let cached = try store!.readEncoded(0, keys: Array(1...100))
        #expect(
            Set(cached.map { ObjectIdentifier($0!.storage) }).count == 100, "rows read for a cache keep a block each")
        for (key, row) in zip(1...100, cached) { Self.check(row, expected(PrimaryKey(key)), "cached \(key)") }
        try store!.close()
    }

    /// A scan or a read by keys that takes at least half of a block's rows keeps them in place:
    /// the rows of one block share one heap block of their column offsets, which holds the
    /// decoded block, and no row's bytes are copied. Rows taken from fewer than half are copied.
    /// The rows kept in place read every value they were written with after their blocks left a
    /// cache too small for them, after compaction rewrote their segments and after the store
    /// closed.
    @Test func rowsTakenFromMostOfABlockStayInPlaceAndOutliveItsCachingAndCompaction() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.cacheSize = 16 << 10
        configuration.segmentSize = 16 << 10
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        var keys: [PrimaryKey] = []
        for _ in 0..<10 {
            var transaction = Transaction()
            for key in store.allocateKeys(for: TestSchema.employee, count: 40) {
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
                keys.append(key)
            }
            try store.commit(transaction)
        }
        var scanned: [(PrimaryKey, EncodedRow)] = []
        try store.scanEncoded(TestSchema.employee, where: { _, _ in true }) { scanned.append(($0, $1)) }
        var byKeys: [(PrimaryKey, EncodedRow)] = []
        try store.forEachEncodedRow(TestSchema.employee, keys: keys.filter { $0 % 4 != 0 }, where: { _, _ in true }) {
            byKeys.append(($0, $1))
        }
        #expect(scanned.count == 400 && byKeys.count == 300)
        for (rows, stage) in [(scanned, "scan"), (byKeys, "by keys")] {
            let storages = Dictionary(grouping: rows) { ObjectIdentifier($0.1.storage) }
            for rowsOfStorage in storages.values {
                let blocks = Set(rowsOfStorage.map { $0.1.storage.header.block.map(ObjectIdentifier.init) })
                #expect(blocks.count == 1 && blocks.first! != nil, "\(stage): rows in place, one block a storage")
            }
            #expect(
                storages.count >= 10 && storages.count <= rows.count / 10,
                "\(stage): \(storages.count) storages for \(rows.count) rows")
        }
        var few: [EncodedRow] = []
        try store.scanEncoded(TestSchema.employee, where: { key, _ in key % 4 == 0 }) { few.append($1) }
        #expect(few.count == 100 && few.allSatisfy { $0.storage.header.block == nil }, "a quarter of each block copied")

        var deletion = Transaction()
        for key in keys where key % 4 == 0 { deletion.delete(TestSchema.employee, key: key) }
        try store.commit(deletion)
        try store.deleteHistory(before: store.lastSequence + 1)
        try store.compact()
        var compacted = 0
        try store.scanEncoded(TestSchema.employee, where: { _, _ in true }) { key, row in
            compacted += 1
            Self.check(row, TestSchema.employee(Int(key)), "\(key) read after compaction")
        }
        #expect(compacted == 300)
        try store.close()
        for (key, row) in scanned + byKeys {
            Self.check(row, TestSchema.employee(Int(key)), "\(key) kept in place, after compaction and close")
        }
    }

    /// Reading rows of a block in place (the rows a walk tests) records each row's column
    /// offsets in the block (unless the row is longer than 64 KiB), as its check computed them;
    /// the next read of those rows copies them instead of checking the bytes again and reads the
    /// same values. A row read on its own, and rows read in a batch for a row cache, record
    /// nothing, and a row that does not decode is refused every time and never recorded.
    @Test func rowsReadAgainFromALiveBlockTakeTheOffsetsTheirCheckRecorded() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: RoundTripTests.schema, configuration: TestSchema.configuration())
        defer { try? store.close() }
        var transaction = Transaction()
        let keys = Array(store.allocateKeys(for: RoundTripTests.allTypes, count: RoundTripTests.rows.count))
        for (key, row) in zip(keys, RoundTripTests.rows) {
            transaction.insert(RoundTripTests.allTypes, key: key, row: row)
        }
        try store.commit(transaction)
        // The commit cached its one block, decoded, as block 0.
        let block = try #require(store.cachedBlock(0))
        let format = store.versionFormats[store.schemaHistory.version][RoundTripTests.allTypes]
        let columns = format.codec.storedColumns
        func recorded(_ slot: Int) -> [UInt16]? {
            var offsets = [UInt16](repeating: 0, count: columns)
            return offsets.withUnsafeMutableBytes {
                block.copyCheckedOffsets(slot: slot, columns: columns, into: $0.baseAddress!)
            } ? offsets : nil
        }
        _ = try store.readEncoded(RoundTripTests.allTypes, key: keys[0])
        #expect(recorded(0) == nil, "a row read on its own records nothing")
        let cached = try store.readEncoded(RoundTripTests.allTypes, keys: keys)
        #expect((0..<block.rowCount).allSatisfy { recorded($0) == nil }, "rows read for a row cache record nothing")
        let first = try store.readEncoded(RoundTripTests.allTypes, keys: keys) { _, _ in true }
        for slot in 0..<block.rowCount {
            var checked = [UInt16](repeating: 0, count: columns)
            _ = try checked.withUnsafeMutableBytes { offsets in
                try block.withRow(at: slot) { try format.check($0, offsets: offsets.baseAddress!) }
            }
            // A row longer than 64 KiB keeps no offsets (``EncodedRow``): it is checked each time.
            let long = block.withRow(at: slot) { $0.count } > Int(UInt16.max)
            #expect(recorded(slot) == (long ? nil : checked), "slot \(slot): the offsets the check computes")
        }
        let again = try store.readEncoded(RoundTripTests.allTypes, keys: keys)
        for (index, row) in again.enumerated() {
            Self.check(row, RoundTripTests.rows[index], "read again, key \(keys[index])")
            Self.check(first[index], RoundTripTests.rows[index], "read in place, key \(keys[index])")
            Self.check(cached[index], RoundTripTests.rows[index], "read for a row cache, key \(keys[index])")
        }
        // A row whose string is not UTF-8, in a block of its own.
        let bad = try Self.blockWithRowThatIsNotUTF8()
        for attempt in 1...2 {
            #expect(throws: BinaryReader.Malformed.self, "attempt \(attempt)") {
                try bad.block.withRow(at: 0) {
                    try EncodedRow.withCheckedOffsets($0, format: bad.format, block: bad.block, slot: 0) { _ in }
                }
            }
        }
        var none = [UInt16](repeating: 0, count: 2)
        #expect(
            !none.withUnsafeMutableBytes { bad.block.copyCheckedOffsets(slot: 0, columns: 2, into: $0.baseAddress!) })
    }

    /// Readers on several threads reading the rows of one block at once, each recording the
    /// offsets its check computed while the others read them, all read every value, and leave
    /// every row recorded with the offsets a check computes (the first row recorded allocates
    /// the block's table; the readers race for it on each fresh block).
    @Test func readersRecordingOneBlockAtOnceReadEveryValue() throws {
        let entity = EntitySchema(
            id: 0, name: "Note",
            columns: [ColumnSchema(name: "text", type: .string), ColumnSchema(name: "rank", type: .int64)])
        let codec = RowCodec(entity)
        let format = EncodedRowFormat(codec)
        let rows = (0..<200).map {
            Row([.string(String(repeating: "n", count: $0 % 37) + "é\($0)"), .int(Int64($0) * 1_000_003)])
        }
        var builder = BlockBuilder(entity: 0)
        for (index, row) in rows.enumerated() { _ = builder.append(key: Int64(index + 1), row: row, codec: codec) }
        var stored: [UInt8] = []
        _ = builder.write(to: &stored)
        let wrong = Lock(0)
        for round in 0..<20 {
            let block = try stored.withUnsafeBytes { try DecodedBlock(onDisk: $0) }
            try #require(block.rowCount == rows.count)
            DispatchQueue.concurrentPerform(iterations: 4) { reader in
                // Each reader walks the rows from another start, so that they record rows at once.
                for step in 0..<rows.count {
                    let slot = (step + reader * 50 + round) % rows.count
                    let row = try? block.withRow(at: slot) { bytes in
                        try EncodedRow.withCheckedOffsets(bytes, format: format, block: block, slot: slot) {
                            EncodedRow(copying: bytes, offsets: $0, format: format)
                        }
                    }
                    if row?.value(0) != rows[slot].values[0] || row?.value(1) != rows[slot].values[1] {
                        wrong.withLock { $0 += 1 }
                    }
                }
            }
            for slot in 0..<rows.count {
                var checked = [UInt16](repeating: 0, count: 2)
                _ = try checked.withUnsafeMutableBytes { offsets in
                    try block.withRow(at: slot) { try format.check($0, offsets: offsets.baseAddress!) }
                }
                var recorded = [UInt16](repeating: 0, count: 2)
                let found = recorded.withUnsafeMutableBytes {
                    block.copyCheckedOffsets(slot: slot, columns: 2, into: $0.baseAddress!)
                }
                #expect(found && recorded == checked, "round \(round), slot \(slot)")
            }
        }
        #expect(wrong.withLock { $0 } == 0, "rows read with wrong values")
    }

    /// A checked copy of `bytes`, one row of `format`, as the store makes one.
    static func copy(_ bytes: UnsafeRawBufferPointer, format: EncodedRowFormat) throws -> EncodedRow {
        try EncodedRow.withCheckedOffsets(bytes, format: format, block: nil, slot: 0) {
            EncodedRow(copying: bytes, offsets: $0, format: format)
        }
    }

    /// A block of one `Note(text, rank)` row whose text holds the byte 0xFF (its checksum made
    /// for those bytes, as a writer's bug would leave it), with its format.
    static func blockWithRowThatIsNotUTF8() throws -> (block: DecodedBlock, format: EncodedRowFormat) {
        let entity = EntitySchema(
            id: 0, name: "Note",
            columns: [ColumnSchema(name: "text", type: .string), ColumnSchema(name: "rank", type: .int64)])
        let codec = RowCodec(entity)
        var builder = BlockBuilder(entity: 0)
        _ = builder.append(key: 1, row: Row([.string("abc"), .int(7)]), codec: codec)
        var stored: [UInt8] = []
        _ = builder.write(to: &stored)
        // Too short to compress: the payload after the 16-byte header is the raw block.
        try #require(stored[12] == BlockCodec.raw.rawValue)
        let position = try #require(
            stored.indices.dropFirst(BlockBuilder.headerSize).first { stored[$0] == UInt8(ascii: "b") })
        stored[position] = 0xFF
        let crc = stored.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...]))) }
        stored.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self) }
        let block = try stored.withUnsafeBytes { try DecodedBlock(onDisk: $0) }
        return (block, EncodedRowFormat(codec))
    }

    /// A row is refused when a string holds a byte that is not UTF-8, wherever it sits in strings
    /// of lengths around the 8- and 16-byte widths a scan may read at once, and kept when its
    /// strings are ASCII or valid UTF-8 of any of those lengths.
    @Test func stringsThatAreNotUTF8AreRefusedWhereverTheBadByteSits() throws {
        let entity = EntitySchema(
            id: 0, name: "Note",
            columns: [ColumnSchema(name: "text", type: .string), ColumnSchema(name: "rank", type: .int64)])
        let codec = RowCodec(entity)
        let format = EncodedRowFormat(codec)
        func encoded(_ text: [UInt8]) -> [UInt8] {
            var writer = BinaryWriter()
            codec.encode(Row([.string("x"), .int(7)]), into: &writer)
            // The bitmap byte, then the one-byte string "x" (length 1): replace it with `text`.
            var bytes = [writer.bytes[0]]
            var prefix = BinaryWriter()
            prefix.lengthPrefixed(text)
            bytes += prefix.bytes + writer.bytes[3...]
            return bytes
        }
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 120] {
            let ascii = [UInt8]((0..<length).map { UInt8(0x61 + $0 % 26) })
            let row = try encoded(ascii).withUnsafeBytes { try Self.copy($0, format: format) }
            #expect(row.value(0) == .string(String(decoding: ascii, as: UTF8.self)), "ASCII of \(length) bytes")
            #expect(row.value(1) == .int(7), "the column after ASCII of \(length) bytes")
            let accented = Array("é".utf8) + ascii
            let valid = try encoded(accented).withUnsafeBytes { try Self.copy($0, format: format) }
            #expect(
                valid.value(0) == .string(String(decoding: accented, as: UTF8.self)), "UTF-8 of \(accented.count) bytes"
            )
            for position in 0..<length {
                var bad = ascii
                bad[position] = 0xFF
                #expect(throws: BinaryReader.Malformed.self, "0xFF at \(position) of \(length) bytes") {
                    try encoded(bad).withUnsafeBytes { try Self.copy($0, format: format) }
                }
            }
        }
    }
}
