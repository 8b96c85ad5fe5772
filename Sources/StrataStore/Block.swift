import Synchronization

/// How a block's bytes are stored.
enum BlockCodec: UInt8 {
    /// Uncompressed.
    case raw = 0
    /// liblz4 block format.
    case lz4 = 1
    /// liblz4 block format, of a block whose offsets and keys are differences from the ones
    /// before them (``BlockHeaderDifferences``); blocks only.
    case lz4Differences = 2
}

/// A block's offsets and keys as differences from the ones before them, in the uncompressed
/// layout before LZ4 compresses it (``BlockCodec/lz4Differences``): rows appended in key order
/// have keys that differ by one and sizes that differ little, which LZ4 stores in a fraction of
/// the 12 bytes a row the offsets and keys take. The layout keeps its size, so a reader undoes
/// the differences in place after decompressing, in one pass over the rows.
enum BlockHeaderDifferences {
    /// Turns the offsets and keys of the block `raw` (its row count already checked to fit)
    /// into differences.
    static func make(_ raw: UnsafeMutableRawBufferPointer, rowCount count: Int) {
        for index in stride(from: count, to: 0, by: -1) {
            let offset = 4 + 4 * index
            let value = u32(raw, offset) &- u32(raw, offset - 4)
            raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
        }
        let keys = 4 + 4 * (count + 1)
        for index in stride(from: count - 1, to: 0, by: -1) {
            let offset = keys + 8 * index
            let value = i64(raw, offset) &- i64(raw, offset - 8)
            raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Int64.self)
        }
    }

    /// The row count of the uncompressed block `raw` (either layout), when its offsets and keys
    /// fit it and it is at most ``BlockBuilder/maxRows``.
    static func rowCount(of raw: UnsafeRawBufferPointer) -> Int? {
        guard raw.count >= 4 else { return nil }
        let count = Int(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
        guard count <= BlockBuilder.maxRows, 4 + 4 * (count + 1) + 8 * count <= raw.count else { return nil }
        return count
    }

    /// Turns the differences of the block `raw`, of `count` rows (``rowCount(of:)``), back into
    /// offsets and keys. Their order is checked afterwards, as any block's is.
    static func undo(_ raw: UnsafeMutableRawBufferPointer, rowCount count: Int) {
        for index in stride(from: 1, through: count, by: 1) {
            let offset = 4 + 4 * index
            let value = u32(raw, offset) &+ u32(raw, offset - 4)
            raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
        }
        let keys = 4 + 4 * (count + 1)
        for index in stride(from: 1, to: count, by: 1) {
            let offset = keys + 8 * index
            let value = i64(raw, offset) &+ i64(raw, offset - 8)
            raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Int64.self)
        }
    }

    private static func u32(_ raw: UnsafeMutableRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private static func i64(_ raw: UnsafeMutableRawBufferPointer, _ offset: Int) -> Int64 {
        Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }
}

/// Builds one block: rows of one entity, encoded, with their keys and offsets.
///
/// Uncompressed layout: `u32 rowCount`, `u32 offsets[rowCount + 1]` (into the row data),
/// `i64 keys[rowCount]`, then the row data. On disk a 16-byte header precedes the stored bytes:
/// `u32 maskedCRC32C` (of header bytes 4..<16 and the stored bytes), `u32 storedLength`,
/// `u32 rawLength`, `u8 codec`, `u8 schemaVersion` (0 before the schema first evolved), `u16 entity`.
/// A block LZ4 compresses is written with its offsets and keys as differences
/// (``BlockCodec/lz4Differences``).
struct BlockBuilder {
    /// The size of the on-disk block header.
    static let headerSize = 16
    /// The most rows one block holds.
    static let maxRows = 4096

    /// The entity of every row in the block.
    let entity: Int
    /// The version of the schema the rows are encoded under (``SchemaHistory/version``).
    let schemaVersion: UInt8
    private(set) var keys: [Int64] = []
    private var offsets: [UInt32] = [0]
    private var data = BinaryWriter()

    /// Creates an empty block for `entity`, its rows encoded under schema version `schemaVersion`.
    init(entity: Int, schemaVersion: UInt8 = 0) {
        self.entity = entity
        self.schemaVersion = schemaVersion
    }

    /// The number of rows.
    var rowCount: Int { keys.count }

    /// The uncompressed size of the block so far.
    var rawSize: Int { 4 + 4 * (keys.count + 1) + 8 * keys.count + data.count }

    /// Appends a row and returns its slot, where it starts among the block's row data, and its
    /// encoded size.
    mutating func append(key: Int64, row: Row, codec: RowCodec) -> (slot: Int, start: Int, size: Int) {
        let start = data.count
        codec.encode(row, into: &data)
        keys.append(key)
        offsets.append(UInt32(data.count))
        return (keys.count - 1, start, data.count - start)
    }

    /// Appends already-encoded row bytes (a row copied by compaction) and returns its slot and
    /// where it starts among the block's row data.
    mutating func append(key: Int64, encodedRow: UnsafeRawBufferPointer) -> (slot: Int, start: Int) {
        let start = data.count
        data.raw(encodedRow)
        keys.append(key)
        offsets.append(UInt32(data.count))
        return (keys.count - 1, start)
    }

    /// Appends the on-disk form of the block (header and stored bytes) to `output`; returns the
    /// block as a reader decodes it from there, made from the uncompressed bytes it was written
    /// from (for the block cache: see ``EncodedRecord/decodedBlocks``).
    @discardableResult
    func write(to output: inout [UInt8]) -> DecodedBlock {
        // Made in a closure, so that no writer still shares the bytes when they are changed in
        // place below (which would copy them).
        var raw: [UInt8] = {
            var writer = BinaryWriter(capacity: rawSize)
            writer.u32(UInt32(keys.count))
            for offset in offsets { writer.u32(offset) }
            for key in keys { writer.fixed(key) }
            writer.raw(data.bytes)
            return writer.bytes
        }()
        let headerStart = output.count
        output.append(contentsOf: repeatElement(0, count: Self.headerSize))
        // Compressed with the offsets and keys as differences; stored as it is with them as
        // they are, which is also the layout the block is read in.
        raw.withUnsafeMutableBytes { BlockHeaderDifferences.make($0, rowCount: keys.count) }
        let stored = raw.withUnsafeBytes { LZ4.compress($0, appendingTo: &output) }
        raw.withUnsafeMutableBytes { BlockHeaderDifferences.undo($0, rowCount: keys.count) }
        let codec: BlockCodec = stored == nil ? .raw : .lz4Differences
        if stored == nil { output.append(contentsOf: raw) }
        var header = BinaryWriter(capacity: Self.headerSize)
        header.u32(0)
        header.u32(UInt32(stored ?? raw.count))
        header.u32(UInt32(raw.count))
        header.u8(codec.rawValue)
        header.u8(schemaVersion)
        header.u16(UInt16(entity))
        output.replaceSubrange(headerStart..<headerStart + Self.headerSize, with: header.bytes)
        let crc = output.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(headerStart + 4)...])) }
        output.withUnsafeMutableBytes {
            $0.storeBytes(of: CRC32C.mask(crc).littleEndian, toByteOffset: headerStart, as: UInt32.self)
        }
        return DecodedBlock(built: raw, entity: entity, schemaVersion: schemaVersion, rowCount: keys.count)
    }
}

/// A decompressed, validated block, shared read-only by every reader through the block cache.
final class DecodedBlock: @unchecked Sendable {
    // @unchecked: `bytes` is written only before the block is shared, and freed in `deinit`.

    /// The uncompressed bytes, on the heap, freed with the block.
    private let bytes: UnsafeMutableRawBufferPointer
    /// The entity of the rows.
    let entity: Int
    /// The version of the schema the rows are encoded under.
    let schemaVersion: UInt8
    /// The number of rows.
    let rowCount: Int
    private let dataStart: Int
    /// The number of uncompressed bytes.
    private let byteCount: Int
    /// The column offsets of the rows already checked as encoded rows, so that a row read again
    /// is not checked again (``copyCheckedOffsets(slot:columns:into:)``): the address of the
    /// table the first row recorded allocated (0 until then), read without a lock
    /// (``DecodedBlock+CheckedRows``).
    let checkedOffsets = Atomic<UInt>(0)

    /// The block whose uncompressed bytes a ``BlockBuilder`` just laid out: the bytes a read
    /// decompresses from its on-disk form, taken without a check.
    fileprivate init(built bytes: [UInt8], entity: Int, schemaVersion: UInt8, rowCount: Int) {
        self.bytes = bytes.withUnsafeBytes { Self.copy(of: $0) }
        self.entity = entity
        self.schemaVersion = schemaVersion
        self.rowCount = rowCount
        dataStart = 4 + 4 * (rowCount + 1) + 8 * rowCount
        byteCount = bytes.count
    }

    /// Decodes a block from its on-disk form (header and stored bytes).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the checksum fails or the layout is inconsistent;
    ///   the offset is relative to the start of `stored`.
    init(onDisk stored: UnsafeRawBufferPointer) throws {
        var reader = BinaryReader(stored)
        let maskedCRC = try reader.u32()
        let storedLength = Int(try reader.u32())
        let rawLength = Int(try reader.u32())
        let codec = try reader.u8()
        schemaVersion = try reader.u8()
        entity = Int(try reader.u16())
        guard storedLength == stored.count - BlockBuilder.headerSize,
            CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: stored[4...]))) == maskedCRC
        else { throw BinaryReader.Malformed(offset: 0) }
        let payload = try reader.bytes(storedLength)
        let memory: UnsafeMutableRawBufferPointer
        switch BlockCodec(rawValue: codec) {
        case .raw?:
            guard rawLength == storedLength else { throw BinaryReader.Malformed(offset: 8) }
            memory = Self.copy(of: payload)
        case let lz4? where lz4 != .raw:
            guard LZ4.canExpand(storedLength, to: rawLength) else { throw BinaryReader.Malformed(offset: 8) }
            memory = Self.allocate(rawLength)
            do {
                guard LZ4.decompress(payload, into: memory.baseAddress!, rawCount: rawLength) else {
                    throw BinaryReader.Malformed(offset: BlockBuilder.headerSize)
                }
                if lz4 == .lz4Differences {
                    let raw = UnsafeMutableRawBufferPointer(start: memory.baseAddress, count: rawLength)
                    guard let count = BlockHeaderDifferences.rowCount(of: UnsafeRawBufferPointer(raw)) else {
                        throw BinaryReader.Malformed(offset: BlockBuilder.headerSize)
                    }
                    BlockHeaderDifferences.undo(raw, rowCount: count)
                }
            } catch {
                memory.deallocate()
                throw error
            }
        default:
            throw BinaryReader.Malformed(offset: 12)
        }
        do {
            (rowCount, dataStart) = try Self.layout(
                of: UnsafeRawBufferPointer(start: memory.baseAddress, count: rawLength))
        } catch {
            memory.deallocate()
            throw error
        }
        bytes = memory
        byteCount = rawLength
    }

    /// The row count and where the row data starts of the uncompressed block `raw`, its offsets
    /// checked to be in order and inside it.
    private static func layout(of raw: UnsafeRawBufferPointer) throws -> (rowCount: Int, dataStart: Int) {
        guard let count = BlockHeaderDifferences.rowCount(of: raw) else { throw BinaryReader.Malformed(offset: 0) }
        let start = 4 + 4 * (count + 1) + 8 * count
        var inner = BinaryReader(raw, position: 4)
        var previous: UInt32 = 0
        for _ in 0...count {
            let offset = try inner.u32()
            guard offset >= previous, Int(offset) <= raw.count - start else { throw BinaryReader.Malformed(offset: 0) }
            previous = offset
        }
        return (count, start)
    }

    /// Uninitialized heap memory for `count` bytes of a block (at least one byte).
    private static func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        .allocate(byteCount: Swift.max(count, 1), alignment: 16)
    }

    /// Heap memory holding a copy of `source`.
    private static func copy(of source: UnsafeRawBufferPointer) -> UnsafeMutableRawBufferPointer {
        let memory = allocate(source.count)
        if let start = source.baseAddress { memory.baseAddress!.copyMemory(from: start, byteCount: source.count) }
        return memory
    }

    deinit {
        releaseCheckedOffsets()
        bytes.deallocate()
    }

    /// The uncompressed bytes.
    private var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes.baseAddress, count: byteCount) }

    /// The key of the row in `slot`.
    func key(at slot: Int) -> Int64 {
        Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 4 + 4 * (rowCount + 1) + 8 * slot, as: Int64.self))
    }

    /// Calls `body` with the encoded bytes of the row in `slot`.
    func withRow<R>(at slot: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let raw = raw
        let start = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 + 4 * slot, as: UInt32.self)))
        let end = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8 + 4 * slot, as: UInt32.self)))
        return try body(UnsafeRawBufferPointer(rebasing: raw[(dataStart + start)..<(dataStart + end)]))
    }

    /// Where the block's row data starts in memory, for the block cache to prefetch a row from
    /// (``LRUCache/value(forKey:prefetching:)``); never read through.
    var rowDataAddress: UnsafeRawPointer? { withRowData(from: 0) { $0.baseAddress } }

    /// Calls `body` with the block's row data from `start` (an offset into it) to its end, or
    /// with no bytes when `start` is past it.
    func withRowData<R>(from start: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let from = Swift.min(dataStart + Swift.max(start, 0), byteCount)
        return try body(UnsafeRawBufferPointer(start: bytes.baseAddress.map { $0 + from }, count: byteCount - from))
    }

    /// The bytes the block holds in memory once cached, for the cache's bound: its bytes and
    /// ``overhead`` (which counts a small block's checked rows' offsets, 2 bytes a column of a row
    /// read as an encoded row; a large block's are a fraction of its bytes).
    var cost: Int { byteCount + Self.overhead }

    /// What a cached block takes beyond its bytes, so that the cache's bound is the memory it
    /// holds even when its blocks are small (a small save writes a block of one row, about 100
    /// bytes): the block object (80 bytes, 96 allocated), its bytes' allocation header and
    /// rounding (16), its checked rows' offsets (about 32 once a row is read), and the cache's
    /// entry: a slot of 48 bytes in an array that grows by doubling (72 on average) and a
    /// dictionary entry of 16 bytes at a load between 3/8 and 3/4 (32).
    static let overhead = 96 + 16 + 32 + 72 + 32
}
