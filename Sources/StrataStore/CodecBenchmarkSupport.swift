import Foundation

// The `Benchmarks` SPI: the engine's row, block and record codecs, exposed to the
// package-benchmark suites through `@_spi(Benchmarks) import StrataStore`. Not a supported
// API; it may change with any release.

/// Rows of one entity, checked against the schema, ready to be encoded the way a commit encodes
/// them: into one on-disk block, or into a whole transaction record.
///
/// Part of the `Benchmarks` SPI. `Sendable`.
@_spi(Benchmarks)
public struct CodecBenchmarkRows: Sendable {
    /// The id of the rows' entity.
    public let entity: Int
    /// The rows' primary keys, one a row, in the order of ``rows``.
    public let keys: [Int64]
    /// The rows, each in the entity's column order.
    public let rows: [Row]
    /// The entity's row codec.
    private let codec: RowCodec

    /// The most rows one block holds.
    public static let maxRowsPerBlock = BlockBuilder.maxRows

    /// Checks `rows` against entity `entity` of `schema`, as a commit checks the rows it inserts.
    ///
    /// - Parameters:
    ///   - schema: the schema the rows belong to.
    ///   - entity: the id of the rows' entity in `schema`.
    ///   - keys: the rows' primary keys, each positive, one a row.
    ///   - rows: the rows.
    /// - Throws: ``StoreError/Code/invalidValue`` when `schema` has no entity `entity`, the
    ///   counts of keys and rows differ, a key is not positive, or a row does not fit the entity.
    public init(schema: Schema, entity: Int, keys: [Int64], rows: [Row]) throws {
        guard schema.entities.indices.contains(entity) else {
            throw StoreError(.invalidValue, "no entity with id \(entity)")
        }
        guard keys.count == rows.count else {
            throw StoreError(.invalidValue, "\(keys.count) keys for \(rows.count) rows")
        }
        if let key = keys.first(where: { $0 <= 0 }) {
            throw StoreError(.invalidValue, "primary keys are positive; got \(key)")
        }
        let codec = RowCodec(schema.entities[entity])
        for row in rows { try codec.validate(row) }
        self.init(entity: entity, keys: keys, rows: rows, codec: codec)
    }

    /// Creates a batch of rows already checked by `codec`.
    private init(entity: Int, keys: [Int64], rows: [Row], codec: RowCodec) {
        self.entity = entity
        self.keys = keys
        self.rows = rows
        self.codec = codec
    }

    /// The number of rows.
    public var count: Int { rows.count }

    /// The first `count` rows (or all of them, when there are fewer), without checking them again.
    public func prefix(_ count: Int) -> CodecBenchmarkRows {
        CodecBenchmarkRows(
            entity: entity, keys: Array(keys.prefix(count)), rows: Array(rows.prefix(count)), codec: codec)
    }

    /// The number of leading rows that a commit inserting these rows puts in its first block,
    /// when blocks grow to about `blockSize` uncompressed bytes (the store's
    /// ``StoreConfiguration/blockSize``, 16 KiB by default).
    ///
    /// A block takes rows until it reaches `blockSize` or ``maxRowsPerBlock``, so its
    /// uncompressed size ends up at most one row past `blockSize`.
    public func rowsPerBlock(blockSize: Int) -> Int {
        var builder = RecordBuilder(kind: .transaction, blockSize: blockSize)
        for (key, row) in zip(keys, rows) {
            builder.add(.insert, entity: entity, key: key, row: row, codec: codec)
            if let last = builder.ops.last, last.block > 0 { break }
        }
        return builder.ops.prefix { $0.block == 0 }.count
    }

    /// Encodes every row into one block, in the block's on-disk form: the 16-byte header
    /// (checksum, lengths, codec, entity) and the rows, their offsets and keys, LZ4-compressed
    /// when that saves space. This is what a commit writes for each block of its record.
    ///
    /// - Precondition: ``count`` is at most ``maxRowsPerBlock``.
    public func encodeBlock() -> [UInt8] {
        precondition(count <= Self.maxRowsPerBlock, "a block holds at most \(Self.maxRowsPerBlock) rows, not \(count)")
        var block = BlockBuilder(entity: entity)
        for (key, row) in zip(keys, rows) {
            _ = block.append(key: key, row: row, codec: codec)
        }
        var output: [UInt8] = []
        block.write(to: &output)
        return output
    }

    /// Encodes the rows as the inserts of one transaction record, cut into blocks of about
    /// `blockSize` uncompressed bytes, and seals it (sequence number and checksum), as a commit
    /// of these inserts writes it to the log.
    ///
    /// Only the encoding is done: no key allocation, no write, no index maintenance.
    ///
    /// - Parameters:
    ///   - blockSize: the uncompressed size blocks grow to. The default is 16 KiB, the store's default.
    ///   - sequence: the commit sequence number sealed into the record. The default is 1.
    ///   - timestamp: when the transaction was made. The default is now.
    ///   - author: who made the transaction, kept in its history. The default is none.
    ///   - contextName: the context that saved it, kept in its history. The default is none.
    /// - Returns: the sealed record, which ``CodecBenchmarkDecoder/parseRecord(_:)`` reads back.
    /// - Throws: ``StoreError/Code/invalidValue`` when the record is larger than 1 GiB or holds
    ///   more than 65,535 blocks.
    public func encodeTransactionRecord(
        blockSize: Int = 16 << 10,
        sequence: UInt64 = 1,
        timestamp: Date = Date(),
        author: String? = nil,
        contextName: String? = nil
    ) throws -> [UInt8] {
        var builder = RecordBuilder(kind: .transaction, blockSize: blockSize)
        for (key, row) in zip(keys, rows) {
            builder.add(.insert, entity: entity, key: key, row: row, codec: codec)
        }
        let record = builder.build(timestamp: timestamp, author: author, contextName: contextName)
        try record.checkSize()
        var bytes = record.bytes
        RecordHeader.seal(&bytes, sequence: sequence)
        return bytes
    }
}

/// Reads back the blocks and records that ``CodecBenchmarkRows`` encodes, the way the store
/// reads them: checksums verified, blocks decompressed, rows decoded.
///
/// Part of the `Benchmarks` SPI. `Sendable`.
@_spi(Benchmarks)
public struct CodecBenchmarkDecoder: Sendable {
    /// The row codec of each entity, by entity id.
    private let codecs: [RowCodec]

    /// Creates a decoder for blocks and records of the entities of `schema`.
    public init(schema: Schema) {
        codecs = schema.entities.map(RowCodec.init)
    }

    /// Decodes one block in its on-disk form and every row it holds: verifies the checksum,
    /// decompresses, checks the layout, then decodes each row with its entity's codec, as a read
    /// of a block missing from the cache followed by a scan of all its rows does.
    ///
    /// - Parameters:
    ///   - bytes: bytes holding the block (header and stored bytes).
    ///   - range: where the block sits in `bytes`, such as one of ``CodecBenchmarkRecord/blocks``.
    ///     The default is all of `bytes`.
    /// - Throws: ``StoreError/Code/corrupt`` (with the offset within `bytes` where known) when the
    ///   block fails its checksum, does not parse, holds rows of an entity the schema lacks, or
    ///   holds a row that does not decode.
    public func decodeBlock(_ bytes: [UInt8], range: Range<Int>? = nil) throws -> CodecBenchmarkBlock {
        let range = range ?? bytes.indices
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "the block's range is outside the bytes")
        let block: DecodedBlock
        do {
            block = try bytes.withUnsafeBytes { try DecodedBlock(onDisk: UnsafeRawBufferPointer(rebasing: $0[range])) }
        } catch let error as BinaryReader.Malformed {
            throw StoreError(.corrupt, "the block does not parse", offset: Int64(range.lowerBound + error.offset))
        }
        guard codecs.indices.contains(block.entity) else {
            throw StoreError(.corrupt, "the block holds rows of entity \(block.entity), which the schema lacks")
        }
        let codec = codecs[block.entity]
        var keys: [Int64] = []
        var rows: [Row] = []
        keys.reserveCapacity(block.rowCount)
        rows.reserveCapacity(block.rowCount)
        for slot in 0..<block.rowCount {
            keys.append(block.key(at: slot))
            do {
                rows.append(try block.withRow(at: slot) { try codec.decode($0) })
            } catch {
                throw StoreError(.corrupt, "row \(slot) of the block does not decode", offset: Int64(range.lowerBound))
            }
        }
        return CodecBenchmarkBlock(entity: block.entity, keys: keys, rows: rows)
    }

    /// Parses and verifies a whole record, as recovery and history do when they read the log:
    /// checks its length and checksum, decompresses its metadata, reads its history and
    /// operations, and locates its blocks. The blocks' rows are not decoded; pass
    /// ``CodecBenchmarkRecord/blocks`` to ``decodeBlock(_:range:)`` for that.
    ///
    /// - Parameter bytes: exactly one sealed record.
    /// - Throws: ``StoreError/Code/corrupt`` (with the offset within `bytes` where it failed) when
    ///   the record fails its checksum or does not parse.
    public func parseRecord(_ bytes: [UInt8]) throws -> CodecBenchmarkRecord {
        let record: ParsedRecord
        do {
            record = try bytes.withUnsafeBytes { try ParsedRecord($0) }
        } catch let error as BinaryReader.Malformed {
            throw StoreError(.corrupt, "the record does not parse", offset: Int64(error.offset))
        }
        return CodecBenchmarkRecord(
            isTransaction: record.kind == .transaction,
            sequence: record.sequence,
            timestamp: record.timestamp,
            author: record.author,
            contextName: record.contextName,
            operationCount: record.ops.count,
            blocks: record.blocks.map { $0.offset..<($0.offset + $0.length) })
    }
}

/// The rows of one decoded block, in slot order.
///
/// Part of the `Benchmarks` SPI. `Sendable`.
@_spi(Benchmarks)
public struct CodecBenchmarkBlock: Sendable, Hashable {
    /// The id of the rows' entity.
    public let entity: Int
    /// The rows' primary keys, in slot order.
    public let keys: [Int64]
    /// The rows, in slot order.
    public let rows: [Row]
}

/// What a parsed record holds, apart from its rows.
///
/// Part of the `Benchmarks` SPI. `Sendable`.
@_spi(Benchmarks)
public struct CodecBenchmarkRecord: Sendable, Hashable {
    /// Whether the record is a commit's (rather than compaction's).
    public let isTransaction: Bool
    /// The sequence number sealed into the record.
    public let sequence: UInt64
    /// When the transaction was made (transaction records).
    public let timestamp: Date
    /// Who made the transaction, if known.
    public let author: String?
    /// The context that saved the transaction, if known.
    public let contextName: String?
    /// The number of operations.
    public let operationCount: Int
    /// Where each block (header and stored bytes) sits in the record's bytes.
    public let blocks: [Range<Int>]
}
