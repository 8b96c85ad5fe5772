import Foundation

/// What a log record holds.
enum RecordKind: UInt8 {
    /// One commit: history metadata, changes and row images.
    case transaction = 1
    /// Rows and delete markers copied forward by compaction; no history.
    case compaction = 2
}

/// What one operation of a record does.
enum OpKind: UInt8 {
    /// A committed insert (history).
    case insert = 0
    /// A committed update (history).
    case update = 1
    /// A committed delete (history); its row, if any, is the tombstone.
    case delete = 2
    /// A live row copied by compaction.
    case put = 3
    /// A delete kept by compaction so that an older image of the key stays dead.
    case erase = 4

    /// Whether the operation removes the key.
    var removes: Bool { self == .delete || self == .erase }
}

/// One operation as a record holds it.
struct RecordOp: Sendable {
    /// What it does.
    var kind: OpKind
    /// The entity of the row.
    var entity: Int
    /// The key of the row.
    var key: Int64
    /// The record's block holding the row image (or tombstone), or -1 when there is none.
    var block: Int
    /// The row's slot in that block.
    var slot: Int
    /// The encoded size of the row image.
    var size: Int
    /// Where the row image starts among its block's row data, when this process built the
    /// record (-1 in a record read from the log, which does not say): see ``RowLocation/rowStart``.
    var start: Int = -1
    /// The columns an update changed.
    var changedColumns: [Int]
    /// The record's block holding the row as it was before an update or delete (history), or -1.
    var priorBlock: Int = -1
    /// The prior row's slot in that block.
    var priorSlot: Int = 0
    /// The encoded size of the prior row.
    var priorSize: Int = 0
}

/// The fixed header that starts every record.
///
/// `u32 length` (of the whole record), `u32 maskedCRC32C` (of bytes 8..<length), `u8 kind`,
/// `u8 metaCodec`, `u16 blockCount`, `u32 metaStoredLength`, `u32 metaRawLength`, `u32 flags`
/// (zero in stores written before flags existed), `u64 sequence`. A length of zero marks the end
/// of the log.
enum RecordHeader {
    /// Flag: the transaction metadata carries the bundle identifier and process id after the
    /// context name.
    static let processFlag: UInt32 = 1
    /// Flag: each update and delete operation names the block and slot of its prior row.
    static let priorRowsFlag: UInt32 = 2
    /// Flag: the transaction metadata carries history consumer cursors after the process fields.
    static let cursorsFlag: UInt32 = 4
    /// Flag: the metadata holds the operations column by column (``RecordOpLayout``).
    static let opColumnsFlag: UInt32 = 8

    /// The header's size.
    static let size = 32
    /// The largest record the store writes or accepts.
    static let maxLength = 1 << 30
    /// The most blocks a record holds (its header counts them in 16 bits).
    static let maxBlocks = Int(UInt16.max)
    /// The offset of the sequence number.
    static let sequenceOffset = 24
    /// The largest sequence number a file may hold. Sequences count commits from 1, so one
    /// past `Int64.max` is never reached: a larger one is damage, and refusing it keeps the
    /// store's `lastSequence + count` from overflowing.
    static let maximumSequence = UInt64(Int64.max)

    /// Sets the sequence number and checksum of an encoded record in place.
    static func seal(_ record: inout [UInt8], at start: Int = 0, sequence: UInt64) {
        record.withUnsafeMutableBytes { raw in
            let bytes = UnsafeMutableRawBufferPointer(rebasing: raw[start...])
            seal(
                UnsafeRawBufferPointer(bytes), sequence: sequence,
                into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<size]))
        }
    }

    /// Writes into `header` (``size`` bytes) the header of the encoded `record` sealed with
    /// `sequence`: what ``seal(_:at:sequence:)`` makes of the record's first bytes, for a record
    /// written after its sealed header from its own bytes, uncopied. `header` may be the
    /// record's own first bytes.
    static func seal(_ record: UnsafeRawBufferPointer, sequence: UInt64, into header: UnsafeMutableRawBufferPointer) {
        if UnsafeRawPointer(header.baseAddress) != record.baseAddress {
            header.copyMemory(from: UnsafeRawBufferPointer(rebasing: record[0..<size]))
        }
        header.storeBytes(of: sequence.littleEndian, toByteOffset: sequenceOffset, as: UInt64.self)
        let length = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
        let headerCRC = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[8..<size]))
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[size..<length]), extending: headerCRC)
        header.storeBytes(of: CRC32C.mask(crc).littleEndian, toByteOffset: 4, as: UInt32.self)
    }
}

/// An encoded record, ready for its sequence number, and what it holds.
struct EncodedRecord: Sendable {
    /// The record bytes; the sequence and checksum are set by ``RecordHeader/seal(_:at:sequence:)``.
    var bytes: [UInt8]
    /// The operations, in order.
    var ops: [RecordOp]
    /// Each block's offset and length within the record.
    var blocks: [BlockSpan]
    /// The history consumer cursors the transaction advances, by consumer name.
    var cursors: [String: UInt64] = [:]
    /// The blocks as a read decodes them, by block index, where the writer holds them (a
    /// builder's blocks, or the decoded source blocks a replay copies whole); empty otherwise.
    /// The commit puts them in the block cache, so that reading rows just written decompresses
    /// nothing.
    var decodedBlocks: [DecodedBlock?] = []

    /// Checks that the record fits its header's fields, before it is written.
    ///
    /// - Throws: ``StoreError`` `invalidValue` for a transaction larger than 1 GiB or of more
    ///   than 65,535 blocks; nothing was written.
    func checkSize() throws {
        guard bytes.count <= RecordHeader.maxLength else {
            throw StoreError(
                .invalidValue, "a transaction of \(bytes.count) bytes is larger than 1 GiB; save it in smaller parts")
        }
        guard blocks.count <= RecordHeader.maxBlocks else {
            throw StoreError(
                .invalidValue,
                "a transaction of \(blocks.count) blocks is more than a record holds (\(RecordHeader.maxBlocks)); save it in smaller parts"
            )
        }
    }
}

/// Where a block sits within its record.
struct BlockSpan: Sendable, Hashable {
    /// The offset of the block header from the start of the record.
    var offset: Int
    /// The length of header and stored bytes.
    var length: Int
    /// The entity of the block's rows.
    var entity: Int
}

/// Collects operations and rows, cutting them into blocks per entity, and encodes a record.
struct RecordBuilder {
    private let kind: RecordKind
    private let blockSize: Int
    private let schemaVersion: UInt8
    private var blocks: [BlockBuilder] = []
    private var openBlock: [Int: Int] = [:]
    private(set) var ops: [RecordOp] = []

    /// Creates a builder for a record of `kind` whose blocks grow to about `blockSize` bytes and
    /// hold rows encoded under schema version `schemaVersion`.
    init(kind: RecordKind, blockSize: Int, schemaVersion: UInt8 = 0) {
        self.kind = kind
        self.blockSize = blockSize
        self.schemaVersion = schemaVersion
    }

    /// The uncompressed bytes of rows added so far.
    private(set) var rowBytes = 0

    private mutating func blockIndex(for entity: Int, adding size: Int) -> Int {
        if let index = openBlock[entity] {
            let block = blocks[index]
            if block.rawSize + size + 12 <= blockSize || block.rowCount == 0, block.rowCount < BlockBuilder.maxRows {
                return index
            }
        }
        blocks.append(BlockBuilder(entity: entity, schemaVersion: schemaVersion))
        openBlock[entity] = blocks.count - 1
        return blocks.count - 1
    }

    /// Adds an operation with a row image (insert, update, or a delete's tombstone), encoding
    /// the row straight into its block.
    mutating func add(_ kind: OpKind, entity: Int, key: Int64, row: Row, codec: RowCodec, changedColumns: [Int] = []) {
        let index = blockIndex(for: entity, adding: 0)
        let (slot, start, size) = blocks[index].append(key: key, row: row, codec: codec)
        rowBytes += size
        ops.append(
            RecordOp(
                kind: kind, entity: entity, key: key, block: index, slot: slot, size: size, start: start,
                changedColumns: changedColumns))
    }

    /// Adds an operation with an already-encoded row image.
    mutating func add(
        _ kind: OpKind, entity: Int, key: Int64, encodedRow: UnsafeRawBufferPointer, changedColumns: [Int] = []
    ) {
        let index = blockIndex(for: entity, adding: encodedRow.count)
        let (slot, start) = blocks[index].append(key: key, encodedRow: encodedRow)
        rowBytes += encodedRow.count
        ops.append(
            RecordOp(
                kind: kind, entity: entity, key: key, block: index, slot: slot, size: encodedRow.count, start: start,
                changedColumns: changedColumns))
    }

    /// Records `row` as the prior image (before the change) of the last operation added.
    mutating func addPrior(_ row: Row, codec: RowCodec) {
        let op = ops.count - 1
        let index = blockIndex(for: ops[op].entity, adding: 0)
        let (slot, _, size) = blocks[index].append(key: ops[op].key, row: row, codec: codec)
        rowBytes += size
        ops[op].priorBlock = index
        ops[op].priorSlot = slot
        ops[op].priorSize = size
    }

    /// Records already-encoded row bytes as the prior image of the last operation added.
    mutating func addPrior(encodedRow: UnsafeRawBufferPointer) {
        let op = ops.count - 1
        let index = blockIndex(for: ops[op].entity, adding: encodedRow.count)
        let slot = blocks[index].append(key: ops[op].key, encodedRow: encodedRow).slot
        rowBytes += encodedRow.count
        ops[op].priorBlock = index
        ops[op].priorSlot = slot
        ops[op].priorSize = encodedRow.count
    }

    /// Adds an operation without a row (a delete without tombstone, or an erase).
    mutating func addMarker(_ kind: OpKind, entity: Int, key: Int64) {
        ops.append(RecordOp(kind: kind, entity: entity, key: key, block: -1, slot: 0, size: 0, changedColumns: []))
    }

    /// Appends the operations and blocks of `other` (built with the same kind, block size and
    /// schema version) after this builder's: the parts of a bulk commit encoded at once come
    /// together in their order. Rows added afterwards go to `other`'s open blocks.
    mutating func append(_ other: RecordBuilder) {
        guard !ops.isEmpty || !blocks.isEmpty else {
            self = other
            return
        }
        let shift = blocks.count
        blocks += other.blocks
        for (entity, index) in other.openBlock { openBlock[entity] = index + shift }
        ops.reserveCapacity(ops.count + other.ops.count)
        for var op in other.ops {
            if op.block >= 0 { op.block += shift }
            if op.priorBlock >= 0 { op.priorBlock += shift }
            ops.append(op)
        }
        rowBytes += other.rowBytes
    }

    /// Encodes the record. The history metadata is written for transaction records, which
    /// always use the current format (process fields and prior-row references).
    ///
    /// - Parameter decodedBudget: the most bytes of its blocks, uncompressed, the record keeps in
    ///   ``EncodedRecord/decodedBlocks`` (the first blocks that fit): a commit passes the block
    ///   cache's free room, so that a large transaction holds no more than the cache will take.
    /// - Parameter threads: the most threads the blocks are compressed on.
    func build(
        timestamp: Date = Date(), author: String? = nil, contextName: String? = nil, bundleID: String? = nil,
        processID: Int32? = nil, cursors: [String: UInt64] = [:], decodedBudget: Int = 0, threads: Int = 1
    ) -> EncodedRecord {
        // The blocks kept decoded: the first ones whose cost fits the budget.
        var budget = decodedBudget
        let kept =
            budget > 0
            ? blocks.prefix { block in
                budget -= block.rawSize + DecodedBlock.overhead
                return budget >= 0
            }.count : 0
        var decoded: [DecodedBlock] = []
        var record = Self.encode(
            kind: kind, ops: ops, blockBytes: rowBytes + blocks.count * 64, timestamp: timestamp, author: author,
            contextName: contextName, bundleID: bundleID, processID: processID, cursors: cursors
        ) { bytes in
            let ranges = ParallelParts.ranges(count: blocks.count, minimumPerPart: Self.blocksPerPart, cores: threads)
            guard ranges.count > 1 else { return write(blocks.indices, to: &bytes, keeping: kept, decoded: &decoded) }
            // Compressed at once, a part of the blocks a core, each part into its own bytes.
            let parts = ParallelParts.map(ranges) { range in
                var part: [UInt8] = []
                part.reserveCapacity(blocks[range].reduce(0) { $0 + $1.rawSize + BlockBuilder.headerSize })
                var partDecoded: [DecodedBlock] = []
                let spans = write(range, to: &part, keeping: kept, decoded: &partDecoded)
                return (bytes: part, spans: spans, decoded: partDecoded)
            }
            var spans: [BlockSpan] = []
            spans.reserveCapacity(blocks.count)
            for part in parts {
                let shift = bytes.count
                bytes += part.bytes
                spans += part.spans.lazy.map {
                    BlockSpan(offset: $0.offset + shift, length: $0.length, entity: $0.entity)
                }
                decoded += part.decoded
            }
            return spans
        }
        record.decodedBlocks = decoded.map(Optional.some)
        return record
    }

    /// The fewest blocks a core compresses when a record's blocks are shared out: each part
    /// must outweigh the cost of handing it to another thread.
    static let blocksPerPart = 8

    /// Appends the on-disk form of the blocks in `range` to `output`, and the decoded form of
    /// those before `kept` to `decoded`; returns their places in `output`.
    private func write(
        _ range: Range<Int>, to output: inout [UInt8], keeping kept: Int, decoded: inout [DecodedBlock]
    ) -> [BlockSpan] {
        range.map { index in
            let start = output.count
            let block = blocks[index].write(to: &output)
            if index < kept { decoded.append(block) }
            return BlockSpan(offset: start, length: output.count - start, entity: block.entity)
        }
    }

    /// The fewest metadata bytes a record compresses.
    static let smallestCompressedMeta = 256

    /// Encodes a record of `kind` holding `ops`, whose blocks `writeBlocks` appends in on-disk
    /// form (about `blockBytes` bytes) and returns the places of: a builder's blocks, or blocks
    /// copied whole from another record whose operations refer to them as `ops` do.
    static func encode(
        kind: RecordKind, ops: [RecordOp], blockBytes: Int, timestamp: Date, author: String?, contextName: String?,
        bundleID: String?, processID: Int32?, cursors: [String: UInt64], writeBlocks: (inout [UInt8]) -> [BlockSpan]
    ) -> EncodedRecord {
        // Room for the strings and cursors too, so that the writer does not grow.
        let strings =
            [author, contextName, bundleID].reduce(0) { $0 + ($1?.utf8.count ?? 0) }
            + cursors.keys.reduce(0) { $0 + $1.utf8.count }
        var meta = BinaryWriter(capacity: 32 + strings + cursors.count * 16 + ops.count * 10)
        var flags =
            RecordHeader.opColumnsFlag
            | (kind == .transaction ? RecordHeader.processFlag | RecordHeader.priorRowsFlag : 0)
        if kind == .transaction && !cursors.isEmpty { flags |= RecordHeader.cursorsFlag }
        if kind == .transaction {
            meta.u64(timestamp.timeIntervalSinceReferenceDate.bitPattern)
            meta.optionalString(author)
            meta.optionalString(contextName)
            meta.optionalString(bundleID)
            meta.varint(processID.map { UInt64(UInt32(bitPattern: $0)) + 1 } ?? 0)
            if flags & RecordHeader.cursorsFlag != 0 {
                meta.varint(cursors.count)
                for (name, sequence) in cursors.sorted(by: { $0.key < $1.key }) {
                    meta.string(name)
                    meta.u64(sequence)
                }
            }
        }
        RecordOpLayout.write(ops, priorRows: flags & RecordHeader.priorRowsFlag != 0, to: &meta)
        var bytes = [UInt8](repeating: 0, count: RecordHeader.size)
        bytes.reserveCapacity(RecordHeader.size + meta.count + blockBytes)
        // A few operations' metadata is stored as it is: LZ4 seldom saves a sixteenth of so few
        // bytes, and readying its state for them took longer than encoding them.
        let compressedMeta =
            meta.count < Self.smallestCompressedMeta
            ? nil : meta.bytes.withUnsafeBytes { LZ4.compress($0, appendingTo: &bytes) }
        if compressedMeta == nil { bytes.append(contentsOf: meta.bytes) }
        let spans = writeBlocks(&bytes)
        var header = BinaryWriter(capacity: RecordHeader.size)
        header.u32(UInt32(bytes.count))
        header.u32(0)
        header.u8(kind.rawValue)
        header.u8(compressedMeta == nil ? BlockCodec.raw.rawValue : BlockCodec.lz4.rawValue)
        // A record of more blocks is refused by `checkSize()` before it is written.
        header.u16(UInt16(truncatingIfNeeded: spans.count))
        header.u32(UInt32(compressedMeta ?? meta.count))
        header.u32(UInt32(meta.count))
        header.u32(flags)
        header.u64(0)
        bytes.replaceSubrange(0..<RecordHeader.size, with: header.bytes)
        return EncodedRecord(bytes: bytes, ops: ops, blocks: spans, cursors: cursors)
    }
}

/// A record read back from the log, checksum verified.
struct ParsedRecord {
    /// The record's kind.
    var kind: RecordKind
    /// The record's length in bytes.
    var length: Int
    /// The commit sequence number (for compaction records, that of the newest commit copied).
    var sequence: UInt64
    /// When the transaction was made (transaction records).
    var timestamp: Date
    /// Who made it.
    var author: String?
    /// The context that saved it.
    var contextName: String?
    /// The bundle identifier of the process that saved it (records with the process flag).
    var bundleID: String?
    /// The id of the process that saved it (records with the process flag).
    var processID: Int32?
    /// The history consumer cursors the transaction advances (records with the cursors flag).
    var cursors: [String: UInt64]
    /// The operations, in order.
    var ops: [RecordOp]
    /// Where each block sits in the record.
    var blocks: [BlockSpan]

    /// The length a record header declares, or 0 at the end of the log.
    static func declaredLength(_ header: UnsafeRawBufferPointer) -> Int {
        Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
    }

    /// Parses and verifies the record that fills `bytes`.
    ///
    /// - Throws: ``BinaryReader/Malformed`` with the offset within the record where it failed.
    init(_ bytes: UnsafeRawBufferPointer) throws {
        var reader = BinaryReader(bytes)
        length = Int(try reader.u32())
        let maskedCRC = try reader.u32()
        guard length == bytes.count, length >= RecordHeader.size,
            CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[8...]))) == maskedCRC
        else { throw BinaryReader.Malformed(offset: 0) }
        guard let kind = RecordKind(rawValue: try reader.u8()) else { throw BinaryReader.Malformed(offset: 8) }
        self.kind = kind
        let metaCodec = try reader.u8()
        let blockCount = Int(try reader.u16())
        let metaStored = Int(try reader.u32())
        let metaRaw = Int(try reader.u32())
        let flags = try reader.u32()
        sequence = try reader.u64()
        guard sequence <= RecordHeader.maximumSequence else {
            throw BinaryReader.Malformed(offset: RecordHeader.sequenceOffset)
        }
        let storedMeta = try reader.bytes(metaStored)
        let meta: [UInt8]
        switch BlockCodec(rawValue: metaCodec) {
        case .raw? where metaRaw == metaStored: meta = [UInt8](storedMeta)
        case .lz4?:
            guard let decompressed = LZ4.decompress(storedMeta, rawCount: metaRaw) else {
                throw BinaryReader.Malformed(offset: RecordHeader.size)
            }
            meta = decompressed
        default: throw BinaryReader.Malformed(offset: 9)
        }
        var blocks: [BlockSpan] = []
        blocks.reserveCapacity(blockCount)
        for _ in 0..<blockCount {
            let start = reader.position
            let header = try reader.bytes(BlockBuilder.headerSize)
            let stored = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            let entity = Int(UInt16(littleEndian: header.loadUnaligned(fromByteOffset: 14, as: UInt16.self)))
            _ = try reader.bytes(stored)
            blocks.append(BlockSpan(offset: start, length: BlockBuilder.headerSize + stored, entity: entity))
        }
        guard reader.isAtEnd else { throw BinaryReader.Malformed(offset: reader.position) }
        self.blocks = blocks
        (timestamp, author, contextName, bundleID, processID, cursors, ops) = try meta.withUnsafeBytes { raw in
            var meta = BinaryReader(raw)
            var timestamp = Date(timeIntervalSinceReferenceDate: 0)
            var author: String?
            var contextName: String?
            var bundleID: String?
            var processID: Int32?
            var cursors: [String: UInt64] = [:]
            if kind == .transaction {
                timestamp = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try meta.u64()))
                author = try meta.optionalString()
                contextName = try meta.optionalString()
                if flags & RecordHeader.processFlag != 0 {
                    bundleID = try meta.optionalString()
                    let process = try meta.varint()
                    guard process <= UInt64(UInt32.max) + 1 else { throw BinaryReader.Malformed(offset: 0) }
                    processID = process == 0 ? nil : Int32(bitPattern: UInt32(process - 1))
                }
                if flags & RecordHeader.cursorsFlag != 0 {
                    for _ in 0..<(try meta.count(limit: raw.count)) {
                        let name = try meta.string()
                        cursors[name] = try meta.sequence()
                    }
                }
            }
            let priorRows = flags & RecordHeader.priorRowsFlag != 0
            let ops =
                flags & RecordHeader.opColumnsFlag != 0
                ? try RecordOpLayout.readColumns(from: &meta, blockCount: blockCount, priorRows: priorRows)
                : try RecordOpLayout.readRows(from: &meta, blockCount: blockCount, priorRows: priorRows)
            return (timestamp, author, contextName, bundleID, processID, cursors, ops)
        }
    }
}
