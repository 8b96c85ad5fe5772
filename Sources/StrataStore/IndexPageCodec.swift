/// How a checkpoint stores a page of an object index (``IndexPage``, 48 KiB in memory) in a few
/// KiB.
///
/// The page is first **packed** into three runs of varints, one entry per slot in slot order:
/// the zigzag difference of each location's place (`(block + 1) << 16 | slot`) from the previous
/// slot's; each encoded size; and the zigzag difference of each location's row start (its top 16
/// bits) from the previous slot's start plus that row's size, which is where the next row of a
/// block starts. Keys inserted in order lie in order in their blocks, so most entries of the first
/// and last runs are one byte. The packed bytes are then stored as one LZ4 block, or as they are
/// when LZ4 does not save a sixteenth of them.
///
/// Stored layout: `u8` codec (``BlockCodec``: raw for the packed bytes, LZ4 for their
/// compression), `u32` packed length, then the bytes.
enum IndexPageCodec {
    /// The stored bytes before the page's data: the codec and the packed length.
    static let headerSize = 5
    /// The longest packed page: a 10-byte varint for each place and start and a 5-byte one for
    /// each size. A stored page claiming more does not parse.
    static let maximumPackedLength = IndexPage.capacity * 25

    /// Appends the stored form of `page` (``IndexPage/byteCount`` bytes: locations, then sizes)
    /// to `output`.
    static func encode(_ page: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        var packed = BinaryWriter(capacity: IndexPage.capacity * 4)
        var previous: UInt64 = 0
        for slot in 0..<IndexPage.capacity {
            let place = RowLocation(raw: location(page, slot)).place
            packed.zigzag(Int64(bitPattern: place &- previous))
            previous = place
        }
        for slot in 0..<IndexPage.capacity { packed.varint(UInt64(size(page, slot))) }
        var expected: UInt64 = 0
        for slot in 0..<IndexPage.capacity {
            let start = location(page, slot) >> 48
            packed.zigzag(Int64(bitPattern: start &- expected))
            expected = nextStart(after: start, size: size(page, slot))
        }
        var header = BinaryWriter(capacity: headerSize)
        header.u8(BlockCodec.lz4.rawValue)
        header.u32(UInt32(packed.count))
        let first = output.count
        output.append(contentsOf: header.bytes)
        if packed.bytes.withUnsafeBytes({ LZ4.compress($0, appendingTo: &output) }) == nil {
            output[first] = BlockCodec.raw.rawValue
            output.append(contentsOf: packed.bytes)
        }
    }

    /// Decodes the stored page `stored` into `page` (``IndexPage/byteCount`` bytes).
    ///
    /// - Throws: ``BinaryReader/Malformed`` when `stored` is not a page this codec wrote: an
    ///   unknown codec, a packed length past ``maximumPackedLength``, LZ4 data that does not
    ///   decompress to it, or packed bytes that do not hold exactly one entry per slot in each run
    ///   or hold a value out of its field's range.
    static func decode(_ stored: UnsafeRawBufferPointer, into page: UnsafeMutableRawBufferPointer) throws {
        var reader = BinaryReader(stored)
        let codec = try reader.u8()
        let length = Int(try reader.u32())
        guard length <= maximumPackedLength else { throw BinaryReader.Malformed(offset: 1) }
        let body = try reader.bytes(reader.remaining)
        switch BlockCodec(rawValue: codec) {
        case .raw?:
            guard body.count == length else { throw BinaryReader.Malformed(offset: headerSize) }
            try unpack(body, into: page)
        case .lz4?:
            guard let packed = LZ4.decompress(body, rawCount: length) else {
                throw BinaryReader.Malformed(offset: headerSize)
            }
            try packed.withUnsafeBytes { try unpack($0, into: page) }
        default:
            throw BinaryReader.Malformed(offset: 0)
        }
    }

    /// Reverses the packing of ``encode(_:appendingTo:)``. On the path of the first read of every
    /// page, so it reads the varints through a pointer, without a throw a value.
    private static func unpack(_ packed: UnsafeRawBufferPointer, into page: UnsafeMutableRawBufferPointer) throws {
        guard let target = page.baseAddress, page.count >= IndexPage.byteCount else {
            throw BinaryReader.Malformed(offset: 0)
        }
        let sizes = IndexPage.capacity * 8
        var position = 0
        let end = packed.count
        /// The next varint; `nil` at the end of the bytes or past 64 bits.
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while position < end, shift < 64 {
                let byte = packed[position]
                position &+= 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift &+= 7
            }
            return nil
        }
        func zigzag(_ raw: UInt64) -> UInt64 { (raw >> 1) ^ (0 &- (raw & 1)) }
        var place: UInt64 = 0
        for slot in 0..<IndexPage.capacity {
            guard let raw = varint() else { throw BinaryReader.Malformed(offset: position) }
            place = place &+ zigzag(raw)
            guard RowLocation(raw: place).place == place else { throw BinaryReader.Malformed(offset: position) }
            target.storeBytes(of: place, toByteOffset: slot &* 8, as: UInt64.self)
        }
        for slot in 0..<IndexPage.capacity {
            guard let raw = varint(), let size = UInt32(exactly: raw) else {
                throw BinaryReader.Malformed(offset: position)
            }
            target.storeBytes(of: size, toByteOffset: sizes &+ slot &* 4, as: UInt32.self)
        }
        var expected: UInt64 = 0
        for slot in 0..<IndexPage.capacity {
            guard let raw = varint() else { throw BinaryReader.Malformed(offset: position) }
            let start = expected &+ zigzag(raw)
            guard start <= 0xFFFF else { throw BinaryReader.Malformed(offset: position) }
            let place = target.load(fromByteOffset: slot &* 8, as: UInt64.self)
            target.storeBytes(of: place | start << 48, toByteOffset: slot &* 8, as: UInt64.self)
            let size = target.load(fromByteOffset: sizes &+ slot &* 4, as: UInt32.self)
            expected = nextStart(after: start, size: size)
        }
        guard position == end else { throw BinaryReader.Malformed(offset: position) }
    }

    /// The start field (start + 1, 0 for none) the row after one whose field is `start` and whose
    /// size is `size` has when it follows it in its block: what the start run is relative to.
    private static func nextStart(after start: UInt64, size: UInt32) -> UInt64 {
        start == 0 ? 0 : start &+ UInt64(size)
    }

    private static func location(_ page: UnsafeRawBufferPointer, _ slot: Int) -> UInt64 {
        page.load(fromByteOffset: slot * 8, as: UInt64.self)
    }

    private static func size(_ page: UnsafeRawBufferPointer, _ slot: Int) -> UInt32 {
        page.load(fromByteOffset: IndexPage.capacity * 8 + slot * 4, as: UInt32.self)
    }
}
