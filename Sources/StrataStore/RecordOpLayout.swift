/// How a record's metadata holds its operations.
///
/// Records written with ``RecordHeader/opColumnsFlag`` (every record since the flag) hold them
/// **column by column**: the operation count, then each field of every operation before the next
/// field, most as differences from the operation before, so that the metadata's LZ4 finds the
/// long runs a bulk save makes (the same kind, entity and block, keys and slots counting up):
///
/// 1. each kind (`u8`);
/// 2. each entity (varint);
/// 3. each key as the zigzag difference from the previous operation's key (the first from 0);
/// 4. each block index (-1: no row) as the zigzag difference from the previous operation's (the
///    first from 0);
/// 5. for each operation with a row, its slot as the zigzag difference from one past the slot of
///    the previous operation with a row (the first from 0);
/// 6. for each operation with a row, its encoded size (varint);
/// 7. each operation's extra fields, as in the row layout.
///
/// Older records hold them **row by row**: per operation its kind, entity, key and block index + 1,
/// then when it has a row its slot and size, then its extra fields.
///
/// The extra fields: for an update the changed column count and columns; with
/// ``RecordHeader/priorRowsFlag``, for an update or delete its prior row's block index + 1 and,
/// when there is one, the prior row's slot and size.
enum RecordOpLayout {
    /// Writes `ops` column by column (the current layout), with their prior rows when
    /// `priorRows` is set.
    static func write(_ ops: [RecordOp], priorRows: Bool, to meta: inout BinaryWriter) {
        meta.varint(ops.count)
        // By position: an operation is read in place, where a copy would retain its changed columns.
        for index in ops.indices { meta.u8(ops[index].kind.rawValue) }
        for index in ops.indices { meta.varint(ops[index].entity) }
        var previousKey: Int64 = 0
        for index in ops.indices {
            meta.zigzag(ops[index].key &- previousKey)
            previousKey = ops[index].key
        }
        var previousBlock = 0
        for index in ops.indices {
            meta.zigzag(Int64(ops[index].block - previousBlock))
            previousBlock = ops[index].block
        }
        var nextSlot = 0
        for index in ops.indices where ops[index].block >= 0 {
            meta.zigzag(Int64(ops[index].slot - nextSlot))
            nextSlot = ops[index].slot + 1
        }
        for index in ops.indices where ops[index].block >= 0 { meta.varint(ops[index].size) }
        for index in ops.indices { writeExtras(of: ops[index], priorRows: priorRows, to: &meta) }
    }

    /// Reads the operations of a record of `blockCount` blocks, column by column.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when they do not parse or name a block, slot or kind
    ///   the record cannot hold.
    static func readColumns(from meta: inout BinaryReader, blockCount: Int, priorRows: Bool) throws -> [RecordOp] {
        // A kind byte an operation: a count the bytes cannot hold reserves nothing.
        let count = try meta.count(limit: meta.remaining)
        var ops: [RecordOp] = []
        ops.reserveCapacity(count)
        for _ in 0..<count {
            guard let kind = OpKind(rawValue: try meta.u8()) else { throw malformed(meta) }
            ops.append(RecordOp(kind: kind, entity: 0, key: 0, block: -1, slot: 0, size: 0, changedColumns: []))
        }
        for index in ops.indices { ops[index].entity = try meta.count(limit: 65_535) }
        var key: Int64 = 0
        for index in ops.indices {
            key = key &+ (try meta.zigzag())
            ops[index].key = key
        }
        var block: Int64 = 0
        for index in ops.indices {
            let difference = try meta.zigzag()
            // Blocks run from -1 (none) to blockCount - 1, the first difference from 0.
            guard difference >= -Int64(blockCount) - 1, difference <= Int64(blockCount) else { throw malformed(meta) }
            block += difference
            guard (-1..<Int64(blockCount)).contains(block), block >= 0 || ops[index].kind.removes else {
                throw malformed(meta)
            }
            ops[index].block = Int(block)
        }
        var nextSlot: Int64 = 0
        for index in ops.indices where ops[index].block >= 0 {
            let difference = try meta.zigzag()
            guard difference >= -Int64(BlockBuilder.maxRows), difference < Int64(BlockBuilder.maxRows) else {
                throw malformed(meta)
            }
            let slot = nextSlot + difference
            guard (0..<Int64(BlockBuilder.maxRows)).contains(slot) else { throw malformed(meta) }
            ops[index].slot = Int(slot)
            nextSlot = slot + 1
        }
        for index in ops.indices where ops[index].block >= 0 { ops[index].size = try meta.count() }
        for index in ops.indices {
            try readExtras(into: &ops[index], from: &meta, blockCount: blockCount, priorRows: priorRows)
        }
        return ops
    }

    /// Reads the operations of a record of `blockCount` blocks, row by row (records written
    /// before ``RecordHeader/opColumnsFlag``).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when they do not parse or name a block or kind the
    ///   record cannot hold.
    static func readRows(from meta: inout BinaryReader, blockCount: Int, priorRows: Bool) throws -> [RecordOp] {
        let count = try meta.count(limit: meta.remaining)
        var ops: [RecordOp] = []
        ops.reserveCapacity(count)
        for _ in 0..<count {
            guard let kind = OpKind(rawValue: try meta.u8()) else { throw malformed(meta) }
            let entity = try meta.count(limit: 65_535)
            let key = Int64(bitPattern: try meta.varint())
            let block = try meta.count(limit: blockCount) - 1
            var slot = 0
            var size = 0
            if block >= 0 {
                slot = try meta.count(limit: BlockBuilder.maxRows - 1)
                size = try meta.count()
            }
            guard block >= 0 || kind.removes else { throw malformed(meta) }
            var op = RecordOp(kind: kind, entity: entity, key: key, block: block, slot: slot, size: size, changedColumns: [])
            try readExtras(into: &op, from: &meta, blockCount: blockCount, priorRows: priorRows)
            ops.append(consume op)
        }
        return ops
    }

    /// Writes the changed columns of an update and, with `priorRows`, the prior row of an update
    /// or delete.
    private static func writeExtras(of op: borrowing RecordOp, priorRows: Bool, to meta: inout BinaryWriter) {
        if op.kind == .update {
            meta.varint(op.changedColumns.count)
            for column in op.changedColumns { meta.varint(column) }
        }
        if priorRows, op.kind == .update || op.kind == .delete {
            meta.varint(UInt64(bitPattern: Int64(op.priorBlock + 1)))
            if op.priorBlock >= 0 {
                meta.varint(op.priorSlot)
                meta.varint(op.priorSize)
            }
        }
    }

    /// Reads what ``writeExtras(of:priorRows:to:)`` wrote into `op`, whose kind is read.
    private static func readExtras(
        into op: inout RecordOp, from meta: inout BinaryReader, blockCount: Int, priorRows: Bool
    ) throws {
        if op.kind == .update {
            let changedCount = try meta.count(limit: 4096)
            for _ in 0..<changedCount { op.changedColumns.append(try meta.count(limit: 4095)) }
        }
        if priorRows, op.kind == .update || op.kind == .delete {
            op.priorBlock = try meta.count(limit: blockCount) - 1
            if op.priorBlock >= 0 {
                op.priorSlot = try meta.count(limit: BlockBuilder.maxRows - 1)
                op.priorSize = try meta.count()
            }
        }
    }

    /// The error for metadata that does not parse, at the reader's position.
    private static func malformed(_ meta: BinaryReader) -> BinaryReader.Malformed {
        BinaryReader.Malformed(offset: meta.position)
    }
}
