import Foundation

/// A 64-bit FNV-1a hash over a canonical encoding of model facts, for version hashes.
///
/// Every value is written with its length or a fixed width, so that different sequences of
/// values never encode to the same bytes. The result is 8 bytes, little-endian.
struct VersionHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Creates an empty hasher.
    init() {}

    /// Feeds raw bytes.
    private mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
    }

    /// Feeds an unsigned integer as 8 little-endian bytes.
    mutating func combine(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { feed($0) }
    }

    /// Feeds a signed integer as 8 little-endian bytes.
    mutating func combine(_ value: Int) { combine(UInt64(bitPattern: Int64(value))) }

    /// Feeds a Boolean as one byte.
    mutating func combine(_ value: Bool) { feed(CollectionOfOne(value ? 1 : 0)) }

    /// Feeds a string: its UTF-8 length, then its UTF-8 bytes.
    mutating func combine(_ value: String) {
        combine(value.utf8.count)
        feed(value.utf8)
    }

    /// Feeds an optional string: a presence byte, then the string.
    mutating func combine(_ value: String?) {
        combine(value != nil)
        if let value { combine(value) }
    }

    /// Feeds data: its length, then its bytes.
    mutating func combine(_ value: Data) {
        combine(value.count)
        feed(value)
    }

    /// The hash, as 8 little-endian bytes.
    var data: Data { withUnsafeBytes(of: state.littleEndian) { Data($0) } }
}
