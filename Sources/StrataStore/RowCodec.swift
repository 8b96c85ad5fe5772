import Foundation

/// Encodes rows of one entity to bytes and back.
///
/// A row is a null bitmap (one bit a column, set for `nil`) followed by each non-nil value:
/// integers and references zigzag varints, `float`/`double`/`date` little-endian IEEE bits,
/// `bool` one byte, `uuid` 16 bytes, and strings, data, URIs and decimals a varint length and bytes.
///
/// A class, immutable and so `Sendable`: codecs are passed and stored by every commit, replay
/// and read of a row, and a copy of a class costs one reference count where a struct holding
/// these five arrays and strings costs five.
final class RowCodec: Sendable {
    /// The entity's column types, in order.
    let types: [ColumnType]
    /// Which columns may be nil.
    let nullable: [Bool]
    /// The entity's name, for error messages.
    let entityName: String
    /// The column names, for error messages.
    let columnNames: [String]
    /// How many columns the encoded rows hold: fewer than ``types`` for rows written under an
    /// earlier version of the schema (see ``SchemaHistory``).
    let storedColumns: Int
    /// The values of the columns past ``storedColumns``.
    let padding: [Value]

    /// Whether the rows store every column, as rows of the current schema do: their bytes are
    /// then a row of the current layout, copied as they are into a record.
    var storesEveryColumn: Bool { storedColumns == types.count }

    /// Creates the codec for `entity`.
    convenience init(_ entity: EntitySchema) {
        self.init(entity, storedColumns: entity.columns.count, padding: [])
    }

    /// Creates the codec that reads rows of `entity` written with only its first `storedColumns`
    /// columns, the others taking the values of `padding`.
    init(_ entity: EntitySchema, storedColumns: Int, padding: [Value]) {
        types = entity.columns.map(\.type)
        nullable = entity.columns.map(\.isNullable)
        entityName = entity.name
        columnNames = entity.columns.map(\.name)
        self.storedColumns = storedColumns
        self.padding = padding
    }

    /// A codec like this one with a reference count of its own. Each part of a bulk commit
    /// encodes with its own copies: a codec shared by the cores, retained for every row, made
    /// its reference count a contended cache line (`perf` of strata-graph-bench B1).
    func copy() -> RowCodec {
        RowCodec(copying: self)
    }

    /// Creates a codec with the fields of `other`.
    private init(copying other: RowCodec) {
        types = other.types
        nullable = other.nullable
        entityName = other.entityName
        columnNames = other.columnNames
        storedColumns = other.storedColumns
        padding = other.padding
    }

    /// Checks that `row` fits the entity: one value a column, each of the column's type.
    ///
    /// - Throws: ``StoreError/Code/invalidValue`` naming the entity and column.
    func validate(_ row: Row) throws {
        guard row.count == types.count else {
            throw StoreError(.invalidValue, "\(entityName) rows have \(types.count) columns, got \(row.count)")
        }
        for (column, value) in row.values.enumerated() {
            if value.isNull {
                guard nullable[column] else {
                    throw StoreError(.invalidValue, "\(entityName).\(columnNames[column]) may not be nil")
                }
            } else if !types[column].accepts(value) {
                throw StoreError(
                    .invalidValue,
                    "\(entityName).\(columnNames[column]) is \(types[column].name); \(value) does not fit")
            }
        }
    }

    /// Appends the encoding of `row` (already validated) to `writer`.
    ///
    /// The bytes are written through a pointer into scratch room on the stack and appended to
    /// the writer in one copy: appending them one at a time checked the array's capacity and
    /// uniqueness at every byte, about half of the encoding's instructions (callgrind of
    /// strata-graph-bench B1). A row longer than the scratch room, or holding a URI or a decimal
    /// (whose text is made to be written), is appended value by value.
    func encode(_ row: Row, into writer: inout BinaryWriter) {
        let written = withUnsafeTemporaryAllocation(byteCount: Self.scratchBytes, alignment: 8) { scratch -> Bool in
            let base = scratch.baseAddress!
            let bitmapBytes = (types.count + 7) / 8
            guard bitmapBytes + 16 <= Self.scratchBytes else { return false }
            base.initializeMemory(as: UInt8.self, repeating: 0, count: bitmapBytes)
            var out = RawOutput(base: base, position: bitmapBytes)
            for (column, value) in row.values.enumerated() {
                // Room for the longest encoding of a fixed-size value; strings and data check their own.
                guard out.position + 16 <= Self.scratchBytes else { return false }
                switch value {
                case .null:
                    base.storeBytes(
                        of: base.load(fromByteOffset: column / 8, as: UInt8.self) | 1 << UInt8(column % 8),
                        toByteOffset: column / 8, as: UInt8.self)
                case .int(let v), .reference(let v): out.varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
                case .float(let v): out.fixed(v.bitPattern)
                case .double(let v): out.fixed(v.bitPattern)
                case .date(let v): out.fixed(v.timeIntervalSinceReferenceDate.bitPattern)
                case .bool(let v): out.fixed(UInt8(v ? 1 : 0))
                case .string(var v):
                    guard v.withUTF8({ out.lengthPrefixed(UnsafeRawBufferPointer($0), limit: Self.scratchBytes) })
                    else { return false }
                case .data(let v):
                    guard v.withUnsafeBytes({ out.lengthPrefixed($0, limit: Self.scratchBytes) }) else { return false }
                case .uuid(let v): withUnsafeBytes(of: v.uuid) { out.raw($0) }
                case .uri, .decimal: return false
                }
            }
            writer.bytes.append(
                contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: out.position))
            return true
        }
        if !written { appendEncoding(row, to: &writer) }
    }

    /// The scratch room ``encode(_:into:)`` writes a row into: at most what the runtime puts on
    /// the stack (a larger temporary allocation goes to the heap).
    private static let scratchBytes = 1024

    /// Writes through a pointer into room the caller checked.
    private struct RawOutput {
        let base: UnsafeMutableRawPointer
        var position: Int

        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: position, as: UInt8.self)
                position += 1
                v >>= 7
            }
            base.storeBytes(of: UInt8(v), toByteOffset: position, as: UInt8.self)
            position += 1
        }

        mutating func fixed<T: FixedWidthInteger>(_ value: T) {
            base.storeBytes(of: value.littleEndian, toByteOffset: position, as: T.self)
            position += MemoryLayout<T>.size
        }

        mutating func raw(_ bytes: UnsafeRawBufferPointer) {
            if let source = bytes.baseAddress { (base + position).copyMemory(from: source, byteCount: bytes.count) }
            position += bytes.count
        }

        /// Writes the length of `bytes` as a varint and the bytes, unless that would pass
        /// `limit`: returns whether they were written.
        mutating func lengthPrefixed(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Bool {
            guard position + 10 + bytes.count <= limit else { return false }
            varint(UInt64(bytes.count))
            raw(bytes)
            return true
        }
    }

    /// Appends the encoding of `row` value by value (a row with a URI or a decimal, or longer
    /// than ``encode(_:into:)``'s scratch room).
    private func appendEncoding(_ row: Row, to writer: inout BinaryWriter) {
        let bitmapStart = writer.count
        let bitmapBytes = (types.count + 7) / 8
        for _ in 0..<bitmapBytes { writer.u8(0) }
        for (column, value) in row.values.enumerated() {
            switch value {
            case .null:
                writer.bytes[bitmapStart + column / 8] |= 1 << UInt8(column % 8)
            case .int(let v), .reference(let v):
                writer.zigzag(v)
            case .float(let v):
                writer.u32(v.bitPattern)
            case .double(let v):
                writer.u64(v.bitPattern)
            case .date(let v):
                writer.u64(v.timeIntervalSinceReferenceDate.bitPattern)
            case .bool(let v):
                writer.u8(v ? 1 : 0)
            case .string(let v):
                writer.string(v)
            case .data(let v):
                writer.lengthPrefixed(v)
            case .uuid(let v):
                withUnsafeBytes(of: v.uuid) { writer.raw($0) }
            case .uri(let v):
                writer.string(v.absoluteString)
            case .decimal(let v):
                writer.string(v.description)
            }
        }
    }

    /// Decodes one row from `bytes`: every column, or with `projection` only the columns it
    /// marks (the others are `null`, their bytes skipped without being copied).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a row of this entity.
    func decode(_ bytes: UnsafeRawBufferPointer, projection: [Bool]? = nil) throws -> Row {
        var reader = BinaryReader(bytes)
        let bitmap = try reader.bytes((storedColumns + 7) / 8)
        var values: [Value] = []
        values.reserveCapacity(types.count)
        for column in 0..<storedColumns {
            let type = types[column]
            if bitmap[column / 8] & (1 << UInt8(column % 8)) != 0 {
                values.append(.null)
            } else if let projection, !projection[column] {
                try skipValue(type, in: &reader)
                values.append(.null)
            } else {
                values.append(try decodeValue(type, from: &reader))
            }
        }
        for (offset, value) in padding.enumerated() {
            values.append(projection.map { $0[storedColumns + offset] } == false ? .null : value)
        }
        return Row(values)
    }

    /// Decodes the values of `columns` (ascending: the entity's indexed columns) of the row in
    /// `bytes`, moving past the other columns' bytes without decoding them and stopping after
    /// the last one asked for.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a row of this entity.
    func decodeIndexed(_ bytes: UnsafeRawBufferPointer, columns: [Int]) throws -> IndexedValues {
        var reader = BinaryReader(bytes)
        let bitmap = try reader.bytes((storedColumns + 7) / 8)
        func isNull(_ column: Int) -> Bool { bitmap[column / 8] & (1 << UInt8(column % 8)) != 0 }
        var values: [Value] = []
        values.reserveCapacity(columns.count)
        var column = 0
        for wanted in columns {
            guard wanted < storedColumns else {
                values.append(padding[wanted - storedColumns])
                continue
            }
            while column < wanted {
                if !isNull(column) { try skipValue(types[column], in: &reader) }
                column += 1
            }
            column += 1
            values.append(isNull(wanted) ? .null : try decodeValue(types[wanted], from: &reader))
        }
        return .list(values)
    }

    /// The value of the column at `column` of the row `bytes` hold, read straight from where it
    /// starts when `offsets` (one `UInt16` a stored column, as ``EncodedRowFormat/check(_:offsets:)``
    /// writes them) is given, else past the columns before it.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold the value.
    func value(_ column: Int, of bytes: UnsafeRawBufferPointer, offsets: UnsafeRawPointer?) throws -> Value {
        guard column < storedColumns else { return padding[column - storedColumns] }
        let bitmapCount = (storedColumns + 7) / 8
        guard bitmapCount <= bytes.count else { throw BinaryReader.Malformed(offset: 0) }
        func isNull(_ column: Int) -> Bool { bytes[column >> 3] & (1 << UInt8(column & 7)) != 0 }
        guard !isNull(column) else { return .null }
        var reader: BinaryReader
        if let offsets {
            reader = BinaryReader(
                bytes, position: Int(offsets.loadUnaligned(fromByteOffset: column << 1, as: UInt16.self)))
        } else {
            reader = BinaryReader(bytes, position: bitmapCount)
            for earlier in 0..<column where !isNull(earlier) {
                try skipValue(types[earlier], in: &reader)
            }
        }
        if let value = try Self.scalarValue(types[column], from: &reader) { return value }
        return try decodeValue(types[column], from: &reader)
    }

    /// The non-nil value of an integer, to-one reference or Boolean column at the reader's
    /// position (the columns fetches most often test and sort on, and every row's entity tag);
    /// `nil` for a column of another type, read by ``decodeValue(_:from:)``. Inlined in
    /// ``value(_:of:offsets:)``, whose reads of such a column then skip the general decoder's
    /// call (~50 instructions a read, callgrind, W5's fetch).
    @inline(__always)
    private static func scalarValue(_ type: ColumnType, from reader: inout BinaryReader) throws -> Value? {
        switch type {
        case .int16, .int32, .int64: return .int(try reader.zigzag())
        case .reference: return .reference(try reader.zigzag())
        case .bool: return .bool(try reader.u8() != 0)
        default: return nil
        }
    }

    /// ``value(_:of:offsets:)`` of a row already checked (``EncodedRowFormat/check(_:offsets:)``),
    /// which always decodes.
    func checkedValue(_ column: Int, of bytes: UnsafeRawBufferPointer, offsets: UnsafeRawPointer?) -> Value {
        do {
            return try value(column, of: bytes, offsets: offsets)
        } catch {
            preconditionFailure("an encoded row checked when it was made does not decode: \(error)")
        }
    }

    /// Moves the reader past one non-nil value of `type`.
    func skipValue(_ type: ColumnType, in reader: inout BinaryReader) throws {
        switch type {
        case .int16, .int32, .int64, .reference: _ = try reader.zigzag()
        case .float: _ = try reader.u32()
        case .double, .date: _ = try reader.u64()
        case .bool: _ = try reader.u8()
        case .uuid: _ = try reader.bytes(16)
        case .string, .binary, .transformable, .uri, .decimal: _ = try reader.lengthPrefixed()
        }
    }

    /// Decodes a one-column row (a codec made for a single column) at the reader's position.
    func decodeSingleValue(from reader: inout BinaryReader) throws -> Value {
        let bitmap = try reader.u8()
        if bitmap & 1 != 0 { return .null }
        return try decodeValue(types[0], from: &reader)
    }

    /// Reads a string written by ``BinaryWriter/string(_:)``, as ``BinaryReader/string()`` does:
    /// ASCII text (most stored text) is made without the generic UTF-8 validation, which costs
    /// more than the copy; other text is validated.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes are not valid UTF-8.
    private static func string(from reader: inout BinaryReader) throws -> String {
        let start = reader.position
        let bytes = try reader.lengthPrefixed().bindMemory(to: UInt8.self)
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        if high < 0x80 { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw BinaryReader.Malformed(offset: start) }
        return text
    }

    /// Decodes one non-nil value of `type` at the reader's position.
    func decodeValue(_ type: ColumnType, from reader: inout BinaryReader) throws -> Value {
        switch type {
        case .int16, .int32, .int64, .reference, .bool:
            return try Self.scalarValue(type, from: &reader)!
        case .float:
            return .float(Float(bitPattern: try reader.u32()))
        case .double:
            return .double(Double(bitPattern: try reader.u64()))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.u64())))
        case .string:
            return .string(try Self.string(from: &reader))
        case .binary, .transformable:
            return .data(Data(try reader.lengthPrefixed()))
        case .uuid:
            let raw = try reader.bytes(16)
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            return .uuid(UUID(uuid: uuid))
        case .uri:
            let start = reader.position
            guard let url = URL(string: try reader.string()) else { throw BinaryReader.Malformed(offset: start) }
            return .uri(url)
        case .decimal:
            let start = reader.position
            let text = try reader.string()
            // `Decimal.nan.description` is "NaN", which `Decimal(string:)` does not parse.
            if text == "NaN" { return .decimal(.nan) }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw BinaryReader.Malformed(offset: start)
            }
            return .decimal(decimal)
        }
    }
}
