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
    /// - Returns: the number of bytes the row takes from the start of `bytes`.
    /// - Throws: ``BinaryReader/Malformed`` when they do not.
    @discardableResult
    func check(_ bytes: UnsafeRawBufferPointer, offsets: UnsafeMutableRawPointer?) throws -> Int {
        var reader = BinaryReader(bytes)
        let bitmap = try reader.bytes((codec.storedColumns + 7) / 8)
        for column in 0..<codec.storedColumns {
            offsets?.storeBytes(
                of: UInt16(truncatingIfNeeded: reader.position), toByteOffset: column << 1, as: UInt16.self)
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
        return reader.position
    }
}

/// One stored row kept as its encoded bytes (the null bitmap and the non-nil values, as the
/// log holds them) in a heap block, with its format: what an object or a cache keeps of a row
/// read from the store instead of a ``Row`` of decoded values.
///
/// A row of short strings and numbers takes a few dozen bytes, strings included, where a
/// ``Row`` takes 24 bytes a column plus a heap block per string longer than 15 bytes. A column's
/// value is decoded when it is read (``value(_:)``), straight from where it starts: the check
/// made when the row is copied notes each stored column's offset in a table of `UInt16`s after
/// the bytes (2 bytes a column), so that a read walks no column before it (a row of more than
/// 64 KiB keeps no table and walks them). The bytes are checked when the row is made, so that
/// reading a value never fails. Immutable, and so `Sendable`.
///
/// A row read on its own (a fault, a row the coordinator caches) has a heap block of its own; the
/// rows a fetch reads for its objects share blocks of about 4 KiB (``EncodedRowArena``), which
/// live as long as one of their rows does, or, when the fetch takes most of a decoded block's
/// rows, stay where the block holds them (``storage(inPlace:format:)``).
public struct EncodedRow: @unchecked Sendable {
    /// What heads a ``Storage``: the format of its rows and, for rows kept in place, their block.
    struct Header {
        /// The format of the rows.
        let format: EncodedRowFormat
        /// The decoded block holding the rows' bytes, for rows kept in place; `nil` for rows
        /// copied into the storage.
        let block: DecodedBlock?
    }

    /// Heap blocks of rows of one format. Rows copied into one: at each row's start (a multiple
    /// of 4) its byte count (`UInt32`), then its bytes, then its column offsets. Rows kept in
    /// place in a decoded block: each slot's column offsets (2 bytes a stored column), the
    /// bytes staying in the block. A row's bytes and offsets are never changed once the row is
    /// made (hence `Sendable`, which a `ManagedBuffer` is not declared to be); later rows are
    /// written after or beside them.
    final class Storage: ManagedBuffer<Header, UInt8> {}

    /// Where ``Header/block`` is in a header: after the format, as a struct's stored properties
    /// are laid out (checked when a storage is made).
    private static let blockOffset = MemoryLayout<Unmanaged<EncodedRowFormat>>.stride

    /// The storage.
    let storage: Storage
    /// Where the row starts among the storage's elements, or for a row kept in place its slot
    /// in the block.
    let start: UInt32

    /// The row at `start` of `storage`.
    init(storage: Storage, start: Int) {
        self.storage = storage
        self.start = UInt32(start)
    }

    /// Checks that `bytes` hold one row of `format` and calls `body` with the row's column
    /// offsets (one `UInt16` a stored column; `nil` for a row of more than 64 KiB, which keeps
    /// none): for the row in `slot` of `block`, when given, the offsets the block recorded are
    /// taken instead of checking the bytes again, and with `recordsCheck` a check made is
    /// recorded there, so that it is made once while the block lives.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a row of `format`; what
    ///   `body` throws.
    static func withCheckedOffsets<R>(
        _ bytes: UnsafeRawBufferPointer, format: EncodedRowFormat, block: DecodedBlock?, slot: Int,
        recordsCheck: Bool = true,
        _ body: (UnsafeRawPointer?) throws -> R
    ) throws -> R {
        guard offsetTable(byteCount: bytes.count) != nil else {
            try format.check(bytes, offsets: nil)
            return try body(nil)
        }
        let columns = format.codec.storedColumns
        return try withUnsafeTemporaryAllocation(byteCount: 2 * max(columns, 1), alignment: 2) { buffer in
            let offsets = buffer.baseAddress!
            if let block, block.copyCheckedOffsets(slot: slot, columns: columns, into: offsets) {
                return try body(offsets)
            }
            try format.check(bytes, offsets: offsets)
            if recordsCheck { block?.recordCheckedOffsets(slot: slot, columns: columns, from: offsets) }
            return try body(offsets)
        }
    }

    /// A copy of the row of `format` at the start of `bytes` (which may go on past it: at most
    /// 64 KiB - 1 of them are looked at), checked as ``withCheckedOffsets(_:format:block:slot:recordsCheck:_:)``
    /// checks a row, its end found by the check; `nil` when they do not start with a row of
    /// `format` that ends within that bound.
    static func checkedPrefix(of bytes: UnsafeRawBufferPointer, format: EncodedRowFormat) -> EncodedRow? {
        let bytes = UnsafeRawBufferPointer(rebasing: bytes.prefix(Int(UInt16.max)))
        return withUnsafeTemporaryAllocation(byteCount: 2 * max(format.codec.storedColumns, 1), alignment: 2) {
            buffer in
            guard let count = try? format.check(bytes, offsets: buffer.baseAddress!) else { return nil }
            return EncodedRow(
                copying: UnsafeRawBufferPointer(rebasing: bytes.prefix(count)), offsets: buffer.baseAddress!,
                format: format)
        }
    }

    /// A copy of `bytes`, one row of `format` checked by ``withCheckedOffsets(_:format:block:slot:recordsCheck:_:)``,
    /// with the `offsets` it gave, in a heap block of its own.
    init(copying bytes: UnsafeRawBufferPointer, offsets: UnsafeRawPointer?, format: EncodedRowFormat) {
        let storage = Self.storage(
            format: format, capacity: Self.size(byteCount: bytes.count, storedColumns: format.codec.storedColumns))
        Self.write(bytes, offsets: offsets, storedColumns: format.codec.storedColumns, into: storage, at: 0)
        self.init(storage: storage, start: 0)
    }

    /// A heap block for rows of `format` with room for at least `capacity` bytes.
    static func storage(format: EncodedRowFormat, capacity: Int) -> Storage {
        storage(Header(format: format, block: nil), capacity: capacity)
    }

    /// A heap block for rows of `format` in `block` kept in place (``init(inPlace:slot:offsets:)``),
    /// with room for every slot's column offsets.
    static func storage(inPlace block: DecodedBlock, format: EncodedRowFormat) -> Storage {
        storage(Header(format: format, block: block), capacity: 2 * format.codec.storedColumns * block.rowCount)
    }

    /// A heap block headed by `header`, with room for at least `capacity` bytes.
    private static func storage(_ header: Header, capacity: Int) -> Storage {
        assert(MemoryLayout<Header>.offset(of: \Header.block) == blockOffset)
        return unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in header }, to: Storage.self)
    }

    /// The row in `slot` of the block a storage made by ``storage(inPlace:format:)`` keeps in
    /// place, its column `offsets` (from a check of the row, which is at most 64 KiB long)
    /// written into the storage.
    init(inPlace storage: Storage, slot: Int, offsets: UnsafeRawPointer) {
        storage.withUnsafeMutablePointers { header, elements in
            let columns = header.pointee.format.codec.storedColumns
            (UnsafeMutableRawPointer(elements) + 2 * columns * slot).copyMemory(from: offsets, byteCount: 2 * columns)
        }
        self.init(storage: storage, start: slot)
    }

    /// Writes a row of `bytes` with its column `offsets` (from a check) at `start` of
    /// `storage`, which has room for ``size(byteCount:storedColumns:)`` bytes there.
    static func write(
        _ bytes: UnsafeRawBufferPointer, offsets: UnsafeRawPointer?, storedColumns: Int, into storage: Storage,
        at start: Int
    ) {
        storage.withUnsafeMutablePointerToElements { elements in
            let row = UnsafeMutableRawPointer(elements) + start
            row.storeBytes(of: UInt32(bytes.count), as: UInt32.self)
            if let base = bytes.baseAddress { (row + 4).copyMemory(from: base, byteCount: bytes.count) }
            if let table = offsetTable(byteCount: bytes.count), let offsets {
                (row + 4 + table).copyMemory(from: offsets, byteCount: 2 * storedColumns)
            }
        }
    }

    /// Where the column offsets of a row of `byteCount` bytes start after its bytes (2-byte
    /// aligned), or `nil` when the row is too long for `UInt16` offsets and keeps none.
    private static func offsetTable(byteCount: Int) -> Int? {
        byteCount <= Int(UInt16.max) ? (byteCount + 1) & ~1 : nil
    }

    /// The bytes a row of `byteCount` bytes and `storedColumns` stored columns keeps after its
    /// byte count: the bytes and, unless the row keeps none, its column offsets.
    private static func footprint(byteCount: Int, storedColumns: Int) -> Int {
        offsetTable(byteCount: byteCount).map { $0 + 2 * storedColumns } ?? byteCount
    }

    /// The bytes such a row takes in a heap block of rows, its byte count included, rounded up
    /// to a multiple of 4 (where the next row starts).
    static func size(byteCount: Int, storedColumns: Int) -> Int {
        (4 + footprint(byteCount: byteCount, storedColumns: storedColumns) + 3) & ~3
    }

    /// Calls `body` with the row's format (borrowed: the storage holds it, and the format its
    /// codec, for as long as the caller holds the row, so reading a value retains nothing), its
    /// bytes and its column offsets (`nil` for a row of more than 64 KiB).
    private func withBytes<R>(_ body: (EncodedRowFormat, UnsafeRawBufferPointer, UnsafeRawPointer?) -> R) -> R {
        storage.withUnsafeMutablePointers { header, elements in
            // Reading `storage.header` instead would cost a dynamic exclusivity check.
            let format = UnsafeRawPointer(header).load(as: Unmanaged<EncodedRowFormat>.self)
            // A row kept in place: the storage holds its block, as it holds the format, for as
            // long as the caller holds the row, so both are borrowed without being retained.
            if let block = UnsafeRawPointer(header).load(
                fromByteOffset: Self.blockOffset, as: Unmanaged<DecodedBlock>?.self)
            {
                let slot = Int(start)
                return format._withUnsafeGuaranteedRef { format in
                    block._withUnsafeGuaranteedRef {
                        $0.withRow(at: slot) {
                            body(format, $0, UnsafeRawPointer(elements) + 2 * format.codec.storedColumns * slot)
                        }
                    }
                }
            }
            let row = UnsafeRawPointer(elements) + Int(start)
            let count = Int(row.load(as: UInt32.self))
            let offsets = Self.offsetTable(byteCount: count).map { row + 4 + $0 }
            return format._withUnsafeGuaranteedRef {
                body($0, UnsafeRawBufferPointer(start: row + 4, count: count), offsets)
            }
        }
    }

    /// The number of columns, as a ``Row`` of the entity has.
    public var count: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.format.columnCount } }

    /// The number of encoded bytes.
    public var byteCount: Int { withBytes { _, bytes, _ in bytes.count } }

    /// The number of bytes the row keeps after its byte count: the encoded bytes and, unless the
    /// row is longer than 64 KiB, its column offsets (2 bytes a stored column, 2-byte aligned).
    public var footprint: Int {
        withBytes { format, bytes, _ in
            Self.footprint(byteCount: bytes.count, storedColumns: format.codec.storedColumns)
        }
    }

    /// The value of the column at `column` (`0..<count`).
    public func value(_ column: Int) -> Value {
        withBytes { format, bytes, offsets in format.codec.checkedValue(column, of: bytes, offsets: offsets) }
    }

    /// The row with only the columns `projection` marks decoded (the others `null`; one flag a
    /// column of the entity's current layout), or every column when it is `nil`: what a caller
    /// that needs a few columns of many rows takes, without making the strings and data of the
    /// others.
    package func decoded(projection: [Bool]?) -> Row {
        withBytes { format, bytes, _ in
            do {
                return try format.codec.decode(bytes, projection: projection)
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
