import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Blocks are compressed with their offsets and keys as differences, and read back as written;
/// blocks written before, compressed as they were, still read.
@Suite struct BlockHeaderDifferencesTests {
    /// A block of `count` rows of `key` + 1, + 2, … of 100 to 179 bytes of words.
    static func builder(count: Int, firstKey: Int64 = 1_000) -> BlockBuilder {
        var builder = BlockBuilder(entity: 3)
        for index in 0..<count {
            let row = Array(LZ4BlockTests.compressible(100 + index * 37 % 80, seed: UInt64(index)))
            _ = row.withUnsafeBytes { builder.append(key: firstKey + Int64(index), encodedRow: $0) }
        }
        return builder
    }

    /// The keys and rows of a block of `count` rows as written.
    static func written(count: Int) -> [(Int64, [UInt8])] {
        var output: [UInt8] = []
        return contents(builder(count: count).write(to: &output))
    }

    static func contents(_ block: DecodedBlock) -> [(Int64, [UInt8])] {
        (0..<block.rowCount).map { slot in (block.key(at: slot), block.withRow(at: slot) { Array($0) }) }
    }

    /// The on-disk form of the uncompressed block `raw` compressed as it is (codec 1, as blocks
    /// were written before differences).
    static func plainBlock(_ raw: [UInt8], entity: Int) throws -> [UInt8] {
        var stored: [UInt8] = []
        let count = try #require(raw.withUnsafeBytes { LZ4.compress($0, appendingTo: &stored) })
        var header = BinaryWriter(capacity: BlockBuilder.headerSize)
        header.u32(0)
        header.u32(UInt32(count))
        header.u32(UInt32(raw.count))
        header.u8(BlockCodec.lz4.rawValue)
        header.u8(0)
        header.u16(UInt16(entity))
        var block = header.bytes + stored
        let crc = CRC32C.mask(block.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) })
        block.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, as: UInt32.self) }
        return block
    }

    /// The uncompressed layout of `rows`: count, offsets, keys, row data.
    static func rawLayout(_ rows: [(Int64, [UInt8])]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.u32(UInt32(rows.count))
        var offset: UInt32 = 0
        writer.u32(0)
        for (_, row) in rows {
            offset += UInt32(row.count)
            writer.u32(offset)
        }
        for (key, _) in rows { writer.fixed(key) }
        for (_, row) in rows { writer.raw(row) }
        return writer.bytes
    }

    @Test("a block written with differences reads back its rows and keys, smaller than without them")
    func differencesRoundTrip() throws {
        for count in [0, 1, 2, 80, BlockBuilder.maxRows] {
            let builder = Self.builder(count: count, firstKey: count == 2 ? .max - 1 : 1_000)
            var output: [UInt8] = []
            let built = builder.write(to: &output)
            let read = try output.withUnsafeBytes { try DecodedBlock(onDisk: $0) }
            let expected = Self.contents(built)
            #expect(read.rowCount == count)
            #expect(Self.contents(read).map(\.0) == expected.map(\.0))
            #expect(Self.contents(read).map(\.1) == expected.map(\.1))
            if count == 80 {
                #expect(output[12] == BlockCodec.lz4Differences.rawValue)
                let plain = try Self.plainBlock(Self.rawLayout(expected), entity: 3)
                #expect(output.count + 3 * count < plain.count, "\(output.count) against \(plain.count) bytes")
            }
        }
    }

    @Test("a block compressed without differences, as stores written before them hold, still reads")
    func plainBlocksStillRead() throws {
        let rows = Self.written(count: 50)
        let block = try Self.plainBlock(Self.rawLayout(rows), entity: 3)
        let read = try block.withUnsafeBytes { try DecodedBlock(onDisk: $0) }
        #expect(Self.contents(read).map(\.0) == rows.map(\.0))
        #expect(Self.contents(read).map(\.1) == rows.map(\.1))
    }

    @Test("differences that do not make a block's offsets do not read")
    func damagedDifferencesDoNotRead() throws {
        let rows = Self.written(count: 10)
        // A row count past the block, and a difference that sends an offset past its rows.
        var tooMany = Self.rawLayout(rows)
        tooMany.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(5_000).littleEndian, as: UInt32.self) }
        var pastTheEnd = Self.rawLayout(rows)
        pastTheEnd.withUnsafeMutableBytes { BlockHeaderDifferences.make($0, rowCount: rows.count) }
        pastTheEnd.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(1 << 30).littleEndian, toByteOffset: 8, as: UInt32.self) }
        for raw in [tooMany, pastTheEnd] {
            var block = try Self.plainBlock(raw, entity: 3)
            block[12] = BlockCodec.lz4Differences.rawValue
            let crc = CRC32C.mask(block.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) })
            block.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, as: UInt32.self) }
            #expect(throws: BinaryReader.Malformed.self) { try block.withUnsafeBytes { try DecodedBlock(onDisk: $0) } }
        }
    }
}
