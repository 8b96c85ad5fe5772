/// How the encoded rows of one entity under one schema version are read: the codec the rows
/// were written with, shared by every ``EncodedRow`` of that entity and version.
public final class EncodedRowFormat: Sendable {
    /// The codec of the rows.
    let codec: RowCodec

    /// The format of rows written with `codec`.
    init(_ codec: RowCodec) {
        self.codec = codec
    }

    /// The number of columns a row of this format has (those it stores and those it pads).
    public var columnCount: Int { codec.types.count }

    /// Checks that `bytes` hold one row of this format, so that its values always decode: every
    /// stored value within the bytes, strings valid UTF-8, URIs and decimals parsable. With
    /// `offsets` (room for one `UInt16` per stored column), writes where each stored column's
    /// value starts (a `nil` column's entry is where the next value starts).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when they do not.
    func check(_ bytes: UnsafeRawBufferPointer, offsets: UnsafeMutableRawPointer?) throws {
        var reader = BinaryReader(bytes)
        let bitmap = try reader.bytes((codec.storedColumns + 7) / 8)
        for column in 0..<codec.storedColumns {
            offsets?.storeBytes(of: UInt16(truncatingIfNeeded: reader.position), toByteOffset: column << 1, as: UInt16.self)
            guard bitmap[column >> 3] & (1 << UInt8(column & 7)) == 0 else { continue }
            switch codec.types[column] {
            case .string:
                let start = reader.position
                let text = try reader.lengthPrefixed()
                var high: UInt8 = 0
                for byte in text { high |= byte }
                if high >= 0x80, String(validating: text.bindMemory(to: UInt8.self), as: UTF8.self) == nil {
                    throw BinaryReader.Malformed(offset: start)
                }
            case .uri, .decimal:
                _ = try codec.decodeValue(codec.types[column], from: &reader)
            case let type:
                try codec.skipValue(type, in: &reader)
            }
        }
    }
}

/// The header of an ``EncodedRow``: its format and length.
public struct EncodedRowHeader: Sendable {
    /// How the row's bytes are read.
    let format: EncodedRowFormat
    /// The number of bytes.
    let count: Int
}

/// One stored row kept as its encoded bytes (the null bitmap and the non-nil values, as the
/// log holds them) in one heap block, with its format: what an object or a cache keeps of a row
/// read from the store instead of a ``Row`` of decoded values.
///
/// A row of short strings and numbers takes a few dozen bytes, strings included, where a
/// ``Row`` takes 24 bytes a column plus a heap block per string longer than 15 bytes. A column's
/// value is decoded when it is read (``value(_:)``), straight from where it starts: the check
/// made when the row is copied notes each stored column's offset in a table of `UInt16`s after
/// the bytes (2 bytes a column), so that a read walks no column before it (a row of more than
/// 64 KiB keeps no table and walks them). The bytes are checked when the row is made, so that
/// reading a value never fails. Immutable, and so `Sendable`.
public struct EncodedRow: @unchecked Sendable {
    /// The header and bytes, in one heap block (never changed after ``make(_:format:)``, hence
    /// `Sendable`, which a `ManagedBuffer` is not declared to be).
    final class Storage: ManagedBuffer<EncodedRowHeader, UInt8> {}

    /// The storage.
    let storage: Storage

    /// A copy of `bytes`, one row of `format`: the row in `slot` of `block` when given, whose
    /// check is made once while the block lives (the block records the row's column offsets,
    /// which a later copy takes instead of checking the bytes again).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a row of `format`.
    static func make(_ bytes: UnsafeRawBufferPointer, format: EncodedRowFormat, block: DecodedBlock? = nil, slot: Int = 0) throws -> EncodedRow {
        let table = offsetTable(byteCount: bytes.count)
        let columns = format.codec.storedColumns
        let capacity = footprint(byteCount: bytes.count, storedColumns: columns)
        let storage = unsafeDowncast(
            Storage.create(minimumCapacity: capacity) { _ in EncodedRowHeader(format: format, count: bytes.count) }, to: Storage.self)
        try storage.withUnsafeMutablePointerToElements { elements in
            let raw = UnsafeMutableRawPointer(elements)
            if let base = bytes.baseAddress { raw.copyMemory(from: base, byteCount: bytes.count) }
            let offsets = table.map { raw + $0 }
            if let offsets, let block, block.copyCheckedOffsets(slot: slot, columns: columns, into: offsets) { return }
            try format.check(UnsafeRawBufferPointer(start: raw, count: bytes.count), offsets: offsets)
            if let offsets, let block { block.recordCheckedOffsets(slot: slot, columns: columns, from: offsets) }
        }
        return EncodedRow(storage: storage)
    }

    /// Where the column offsets of a row of `byteCount` bytes start among its storage's
    /// elements (after the bytes, 2-byte aligned), or `nil` when the row is too long for
    /// `UInt16` offsets and keeps none.
    private static func offsetTable(byteCount: Int) -> Int? {
        byteCount <= Int(UInt16.max) ? (byteCount + 1) & ~1 : nil
    }

    /// The bytes a row of `byteCount` bytes and `storedColumns` stored columns keeps after its
    /// header: the bytes and, unless the row keeps none, its column offsets.
    private static func footprint(byteCount: Int, storedColumns: Int) -> Int {
        offsetTable(byteCount: byteCount).map { $0 + 2 * storedColumns } ?? byteCount
    }

    /// The number of columns, as a ``Row`` of the entity has.
    public var count: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.format.columnCount } }

    /// The number of encoded bytes.
    public var byteCount: Int { storage.header.count }

    /// The number of bytes the row keeps after its header: the encoded bytes and, unless the row
    /// is longer than 64 KiB, its column offsets (2 bytes a stored column, 2-byte aligned).
    public var footprint: Int {
        storage.withUnsafeMutablePointerToHeader { Self.footprint(byteCount: $0.pointee.count, storedColumns: $0.pointee.format.codec.storedColumns) }
    }

    /// The value of the column at `column` (`0..<count`).
    public func value(_ column: Int) -> Value {
        // The format is read once outside the closure (whole reads inside it keep the closure
        // out of line and retain more), through the header's pointer: reading `storage.header`
        // costs a dynamic exclusivity check.
        let format = storage.withUnsafeMutablePointerToHeader { $0.pointee.format }
        let stored = format.codec.storedColumns
        guard column < stored else { return format.codec.padding[column - stored] }
        return storage.withUnsafeMutablePointers { header, start in
            let count = header.pointee.count
            let bytes = UnsafeRawBufferPointer(start: start, count: count)
            guard bytes[column >> 3] & (1 << UInt8(column & 7)) == 0 else { return .null }
            do {
                if let table = Self.offsetTable(byteCount: count) {
                    let offset = UnsafeRawPointer(start + table).loadUnaligned(fromByteOffset: column << 1, as: UInt16.self)
                    var reader = BinaryReader(bytes, position: Int(offset))
                    return try format.codec.decodeValue(format.codec.types[column], from: &reader)
                }
                var reader = BinaryReader(bytes, position: (stored + 7) / 8)
                for earlier in 0..<column where bytes[earlier >> 3] & (1 << UInt8(earlier & 7)) == 0 {
                    try format.codec.skipValue(format.codec.types[earlier], in: &reader)
                }
                return try format.codec.decodeValue(format.codec.types[column], from: &reader)
            } catch {
                preconditionFailure("an encoded row checked when it was made does not decode: \(error)")
            }
        }
    }

    /// The row with only the columns `projection` marks decoded (the others `null`; one flag a
    /// column of the entity's current layout), or every column when it is `nil`: what a caller
    /// that needs a few columns of many rows takes, without making the strings and data of the
    /// others.
    package func decoded(projection: [Bool]?) -> Row {
        storage.withUnsafeMutablePointers { header, start in
            let format = header.pointee.format
            do {
                return try format.codec.decode(UnsafeRawBufferPointer(start: start, count: header.pointee.count), projection: projection)
            } catch {
                preconditionFailure("an encoded row checked when it was made does not decode: \(error)")
            }
        }
    }

    /// The row with every column decoded.
    public func decoded() -> Row {
        decoded(projection: nil)
    }
}
