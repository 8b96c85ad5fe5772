import Foundation
import Testing
@testable import StrataStore

/// A record's operations stored column by column: every field of every kind of operation comes
/// back, a bulk save's operations take a small part of the bytes the row layout took, records in
/// the row layout still parse, and operations naming blocks or slots the record cannot hold do not.
@Suite struct RecordOpLayoutTests {
    static let codec = RowCodec(TestSchema.schema.entities[TestSchema.employee])

    /// The fields of `op` a reader gets back.
    static func fields(_ op: RecordOp) -> [Int] {
        [
            Int(op.kind.rawValue), op.entity, Int(op.key), op.block, op.slot, op.size, op.priorBlock, op.priorSlot,
            op.priorSize,
        ] + op.changedColumns
    }

    /// A record of every kind of operation, in an order that makes keys, blocks and slots go
    /// down as well as up.
    static func mixedBuilder(kind: RecordKind) -> RecordBuilder {
        var builder = RecordBuilder(kind: kind, blockSize: 512)
        for index in 0..<40 {
            let key = Int64(index.isMultiple(of: 3) ? 1_000_000 - index : index * 17)
            builder.add(.insert, entity: TestSchema.employee, key: key, row: TestSchema.employee(index), codec: codec)
        }
        builder.add(.put, entity: TestSchema.employee, key: .max, row: TestSchema.employee(1), codec: codec)
        builder.addMarker(.erase, entity: TestSchema.department, key: .min)
        builder.add(
            .update, entity: TestSchema.employee, key: 5, row: TestSchema.employee(50), codec: codec,
            changedColumns: [1, 3])
        builder.addPrior(TestSchema.employee(5), codec: codec)
        builder.add(.delete, entity: TestSchema.employee, key: 6, row: TestSchema.employee(6), codec: codec)
        builder.addPrior(TestSchema.employee(6), codec: codec)
        builder.addMarker(.delete, entity: TestSchema.employee, key: 7)
        builder.add(.insert, entity: TestSchema.department, key: 0, row: Row([.string("D"), .double(1)]),
            codec: RowCodec(TestSchema.schema.entities[TestSchema.department]))
        return builder
    }

    static func parse(_ bytes: [UInt8], sequence: UInt64 = 1) throws -> ParsedRecord {
        var sealed = bytes
        RecordHeader.seal(&sealed, sequence: sequence)
        return try sealed.withUnsafeBytes { try ParsedRecord($0) }
    }

    @Test(arguments: [RecordKind.transaction, .compaction])
    func everyFieldOfEveryKindOfOperationRoundTrips(kind: RecordKind) throws {
        let built = Self.mixedBuilder(kind: kind).build()
        let parsed = try Self.parse(built.bytes)
        #expect(parsed.blocks.count > 3)
        #expect(parsed.ops.count == built.ops.count)
        for (read, written) in zip(parsed.ops, built.ops) {
            var expected = written
            if kind == .compaction { (expected.priorBlock, expected.priorSlot, expected.priorSize) = (-1, 0, 0) }
            #expect(Self.fields(read) == Self.fields(expected))
        }
    }

    @Test func aBulkSavesOperationsTakeUnderTwoBytesEach() throws {
        var builder = RecordBuilder(kind: .transaction, blockSize: 16 << 10)
        for index in 0..<20_000 {
            builder.add(
                .insert, entity: TestSchema.employee, key: Int64(index + 1), row: TestSchema.employee(index),
                codec: Self.codec)
        }
        let record = builder.build()
        let storedMeta = record.bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
        // The row layout took 8 to 9 bytes an insert after LZ4.
        #expect(storedMeta < 2 * 20_000)
        let parsed = try Self.parse(record.bytes)
        #expect(parsed.ops.map(Self.fields) == record.ops.map(Self.fields))
    }

    /// `ops` in the row layout, in a transaction record with process fields and prior rows, as
    /// stores wrote them before the column layout; its blocks are `blocks` (taken whole from a
    /// current record).
    static func rowLayoutRecord(_ ops: [RecordOp], blocks: ArraySlice<UInt8>, blockCount: Int) -> [UInt8] {
        var meta = BinaryWriter()
        meta.u64(Date(timeIntervalSinceReferenceDate: 5).timeIntervalSinceReferenceDate.bitPattern)
        meta.optionalString("author")
        meta.optionalString(nil)
        meta.optionalString(nil)
        meta.varint(0)
        meta.varint(ops.count)
        for op in ops {
            meta.u8(op.kind.rawValue)
            meta.varint(op.entity)
            meta.varint(UInt64(bitPattern: op.key))
            meta.varint(UInt64(bitPattern: Int64(op.block + 1)))
            if op.block >= 0 {
                meta.varint(op.slot)
                meta.varint(op.size)
            }
            if op.kind == .update {
                meta.varint(op.changedColumns.count)
                for column in op.changedColumns { meta.varint(column) }
            }
            if op.kind == .update || op.kind == .delete {
                meta.varint(UInt64(bitPattern: Int64(op.priorBlock + 1)))
                if op.priorBlock >= 0 {
                    meta.varint(op.priorSlot)
                    meta.varint(op.priorSize)
                }
            }
        }
        var header = BinaryWriter()
        header.u32(UInt32(RecordHeader.size + meta.count + blocks.count))
        header.u32(0)
        header.u8(RecordKind.transaction.rawValue)
        header.u8(BlockCodec.raw.rawValue)
        header.u16(UInt16(blockCount))
        header.u32(UInt32(meta.count))
        header.u32(UInt32(meta.count))
        header.u32(RecordHeader.processFlag | RecordHeader.priorRowsFlag)
        header.u64(0)
        return header.bytes + meta.bytes + blocks
    }

    @Test func recordsInTheRowLayoutStillParse() throws {
        let current = Self.mixedBuilder(kind: .transaction).build()
        let blocks = current.bytes[current.blocks[0].offset...]
        let old = try Self.parse(Self.rowLayoutRecord(current.ops, blocks: blocks, blockCount: current.blocks.count))
        #expect(old.author == "author" && old.blocks.count == current.blocks.count)
        #expect(old.ops.map(Self.fields) == current.ops.map(Self.fields))
    }

    /// A transaction record of one insert, its column-layout metadata (stored raw: it is short)
    /// changed by `change`.
    static func oneInsert(_ change: (inout [UInt8]) -> Void) throws -> ParsedRecord {
        var builder = RecordBuilder(kind: .transaction, blockSize: 16 << 10)
        builder.add(.insert, entity: TestSchema.employee, key: 9, row: TestSchema.employee(9), codec: Self.codec)
        var bytes = builder.build().bytes
        let metaLength = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 16, as: UInt32.self)) }
        var meta = Array(bytes[RecordHeader.size..<(RecordHeader.size + metaLength)])
        change(&meta)
        bytes.replaceSubrange(RecordHeader.size..<(RecordHeader.size + metaLength), with: meta)
        return try Self.parse(bytes)
    }

    @Test func operationsNamingBlocksOrSlotsTheRecordCannotHoldDoNotParse() throws {
        // The metadata's last bytes: count 1, kind, entity, key 9 (zigzag 18), block 0, slot 0, size.
        #expect(try Self.oneInsert { _ in }.ops.map { [$0.key, Int64($0.block), Int64($0.slot)] } == [[9, 0, 0]])
        func at(_ meta: [UInt8], fromEnd distance: Int) -> Int { meta.count - distance }
        // Block 1 of a record of one block (zigzag 2).
        #expect(throws: BinaryReader.Malformed.self) {
            try Self.oneInsert { meta in meta[at(meta, fromEnd: 3)] = 2 }
        }
        // No block for an insert (zigzag of -1).
        #expect(throws: BinaryReader.Malformed.self) {
            try Self.oneInsert { meta in meta[at(meta, fromEnd: 3)] = 1 }
        }
        // Slot -1 (zigzag 1).
        #expect(throws: BinaryReader.Malformed.self) {
            try Self.oneInsert { meta in meta[at(meta, fromEnd: 2)] = 1 }
        }
        // A kind that does not exist.
        #expect(throws: BinaryReader.Malformed.self) {
            try Self.oneInsert { meta in meta[at(meta, fromEnd: 6)] = 9 }
        }
    }
}
