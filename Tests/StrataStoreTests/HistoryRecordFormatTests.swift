import Foundation
import Testing
@testable import StrataStore

/// The history record format: records written before the header's flags existed (flags zero:
/// no process fields, prior rows or consumer cursors) still parse; current records carry them.
@Suite struct HistoryRecordFormatTests {
    /// A transaction record as stores wrote it before the flags: one delete without tombstone.
    static func recordWithoutFlags(sequence: UInt64) -> [UInt8] {
        var meta = BinaryWriter()
        meta.u64(Date(timeIntervalSinceReferenceDate: 1_000).timeIntervalSinceReferenceDate.bitPattern)
        meta.optionalString("old author")
        meta.optionalString(nil)
        meta.varint(1)
        meta.u8(OpKind.delete.rawValue)
        meta.varint(TestSchema.employee)
        meta.varint(UInt64(7))
        meta.varint(UInt64(0))
        var header = BinaryWriter()
        header.u32(UInt32(RecordHeader.size + meta.count))
        header.u32(0)
        header.u8(RecordKind.transaction.rawValue)
        header.u8(BlockCodec.raw.rawValue)
        header.u16(0)
        header.u32(UInt32(meta.count))
        header.u32(UInt32(meta.count))
        header.u32(0)
        header.u64(0)
        var bytes = header.bytes + meta.bytes
        RecordHeader.seal(&bytes, sequence: sequence)
        return bytes
    }

    @Test func recordsWithoutFlagsParseAndCurrentOnesCarryTheNewFields() throws {
        let old = try Self.recordWithoutFlags(sequence: 9).withUnsafeBytes { try ParsedRecord($0) }
        #expect(old.sequence == 9 && old.author == "old author" && old.contextName == nil)
        #expect(old.bundleID == nil && old.processID == nil && old.cursors.isEmpty)
        #expect(old.ops.count == 1 && old.ops[0].kind == .delete && old.ops[0].key == 7 && old.ops[0].priorBlock == -1)

        var builder = RecordBuilder(kind: .transaction, blockSize: 16 << 10)
        let codec = RowCodec(TestSchema.schema.entities[TestSchema.employee])
        builder.add(
            .update, entity: TestSchema.employee, key: 3, row: TestSchema.employee(30), codec: codec,
            changedColumns: [0])
        builder.addPrior(TestSchema.employee(3), codec: codec)
        var bytes = builder.build(author: "new", bundleID: "tool", processID: 42, cursors: ["indexer": 2]).bytes
        RecordHeader.seal(&bytes, sequence: 10)
        let current = try bytes.withUnsafeBytes { try ParsedRecord($0) }
        #expect(current.bundleID == "tool" && current.processID == 42 && current.cursors == ["indexer": 2])
        #expect(current.ops.count == 1 && current.ops[0].priorBlock >= 0 && current.ops[0].changedColumns == [0])
    }
}
