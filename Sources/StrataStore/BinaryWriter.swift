import Foundation

/// Appends little-endian integers, varints and length-prefixed bytes to a byte array.
struct BinaryWriter {
    /// The bytes written so far.
    var bytes: [UInt8]

    /// Creates a writer, reserving `capacity` bytes.
    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written.
    var count: Int { bytes.count }

    /// Appends one byte.
    mutating func u8(_ value: UInt8) { bytes.append(value) }

    /// Appends a little-endian `UInt16`.
    mutating func u16(_ value: UInt16) { fixed(value) }

    /// Appends a little-endian `UInt32`.
    mutating func u32(_ value: UInt32) { fixed(value) }

    /// Appends a little-endian `UInt64`.
    mutating func u64(_ value: UInt64) { fixed(value) }

    /// Appends a fixed-width integer, little-endian.
    mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends an unsigned LEB128 varint.
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Appends a non-negative `Int` as a varint.
    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    /// Appends a signed integer, zigzag-encoded as a varint.
    mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends raw bytes.
    mutating func raw<C: Collection>(_ data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }

    /// Appends a varint length and the bytes.
    mutating func lengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        varint(data.count)
        bytes.append(contentsOf: data)
    }

    /// Appends a string as a varint length and its UTF-8 bytes.
    mutating func string(_ value: String) {
        var copy = value
        copy.withUTF8 { lengthPrefixed($0) }
    }

    /// Appends an optional string: a presence byte, then the string.
    mutating func optionalString(_ value: String?) {
        if let value {
            u8(1)
            string(value)
        } else {
            u8(0)
        }
    }

    /// Overwrites a little-endian `UInt32` at `offset`.
    mutating func patchU32(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { source in
            for i in 0..<4 { bytes[offset + i] = source[i] }
        }
    }
}

/// Reads what ``BinaryWriter`` wrote from a borrowed buffer; every read checks bounds.
struct BinaryReader {
    /// Thrown when a read would pass the end of the buffer or a value is malformed.
    struct Malformed: Error {
        /// The offset in the buffer where reading failed.
        var offset: Int
    }

    /// The buffer being read.
    let buffer: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    var position: Int

    /// Creates a reader at `position` of `buffer`.
    init(_ buffer: UnsafeRawBufferPointer, position: Int = 0) {
        self.buffer = buffer
        self.position = position
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position >= buffer.count }

    /// The bytes not yet read.
    var remaining: Int { buffer.count - position }

    private mutating func advance(_ count: Int) throws -> Int {
        guard count >= 0, count <= buffer.count - position else { throw Malformed(offset: position) }
        let start = position
        position += count
        return start
    }

    /// Reads one byte.
    mutating func u8() throws -> UInt8 {
        buffer[try advance(1)]
    }

    /// Reads a little-endian fixed-width integer.
    mutating func fixed<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let start = try advance(MemoryLayout<T>.size)
        return T(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: T.self))
    }

    /// Reads a little-endian `UInt16`.
    mutating func u16() throws -> UInt16 { try fixed() }
    /// Reads a little-endian `UInt32`.
    mutating func u32() throws -> UInt32 { try fixed() }
    /// Reads a little-endian `UInt64`.
    mutating func u64() throws -> UInt64 { try fixed() }

    /// Reads a little-endian `UInt64` that must fit an `Int64`: a file offset or a byte count.
    mutating func offset() throws -> Int64 {
        let start = position
        let value = try u64()
        guard value <= UInt64(Int64.max) else { throw Malformed(offset: start) }
        return Int64(value)
    }

    /// Reads a little-endian `UInt64` sequence number, at most ``RecordHeader/maximumSequence``.
    mutating func sequence() throws -> UInt64 {
        let start = position
        let value = try u64()
        guard value <= RecordHeader.maximumSequence else { throw Malformed(offset: start) }
        return value
    }

    /// Reads a zigzag-encoded next key to allocate: from 1 to ``EntityIndex/maximumKey``.
    mutating func nextKey() throws -> Int64 {
        let start = position
        let key = try zigzag()
        guard key >= 1, key <= EntityIndex.maximumKey else { throw Malformed(offset: start) }
        return key
    }

    /// Reads an unsigned LEB128 varint.
    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < buffer.count, shift < 64 else { throw Malformed(offset: position) }
            let byte = buffer[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a varint that must fit an `Int` no larger than `limit`.
    mutating func count(limit: Int = Int(Int32.max)) throws -> Int {
        let start = position
        let value = try varint()
        guard value <= UInt64(limit) else { throw Malformed(offset: start) }
        return Int(value)
    }

    /// Reads a zigzag-encoded signed integer.
    mutating func zigzag() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Borrows the next `count` bytes.
    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        let start = try advance(count)
        return UnsafeRawBufferPointer(rebasing: buffer[start..<start + count])
    }

    /// Reads a varint length and borrows that many bytes.
    mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        try bytes(count())
    }

    /// Reads a length-prefixed UTF-8 string.
    mutating func string() throws -> String {
        let start = position
        let raw = try lengthPrefixed()
        guard let text = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw Malformed(offset: start)
        }
        return text
    }

    /// Reads an optional string written by ``BinaryWriter/optionalString(_:)``.
    mutating func optionalString() throws -> String? {
        try u8() == 0 ? nil : string()
    }
}

/// The 64-bit FNV-1a hash, used for the schema hash.
enum FNV1a {
    /// Hashes `bytes`.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
