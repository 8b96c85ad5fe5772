/// Unsigned integers bit-packed in groups of ``size``: per group a `u8` bit width (0 to 64, that
/// of the group's widest value), then each value at that width, least significant bit first, in
/// `ceil(width × count / 8)` bytes. Numbers that are mostly small (differences of sorted values,
/// keys below a bound) take the bits they need, not a varint's multiple of seven.
enum BitPackedGroups {
    /// The values a group holds (the last group holds the rest).
    static let size = 128

    /// Collects values and writes them a group at a time.
    struct Writer {
        private var group: [UInt64] = []

        /// Creates a writer with an empty group.
        init() { group.reserveCapacity(BitPackedGroups.size) }

        /// Adds `value`, writing the group to `output` when it is full.
        mutating func append(_ value: UInt64, to output: inout BinaryWriter) {
            group.append(value)
            if group.count == BitPackedGroups.size { flush(to: &output) }
        }

        /// Writes the last group, if it holds a value.
        mutating func finish(to output: inout BinaryWriter) {
            if !group.isEmpty { flush(to: &output) }
        }

        private mutating func flush(to output: inout BinaryWriter) {
            let width = UInt64.bitWidth - group.reduce(0, |).leadingZeroBitCount
            output.u8(UInt8(width))
            // Bits collect in `pending` (the low `filled` of them) and leave eight bytes at a time.
            var pending: UInt64 = 0
            var filled = 0
            for value in group {
                pending |= value << filled
                if filled + width >= 64 {
                    output.u64(pending)
                    // The bits of `value` that did not fit (none when `filled` is 0: a smart
                    // shift by 64 gives 0).
                    pending = value >> (64 - filled)
                    filled = filled + width - 64
                } else {
                    filled += width
                }
            }
            for byte in 0..<((filled + 7) / 8) { output.u8(UInt8(truncatingIfNeeded: pending >> (byte * 8))) }
            group.removeAll(keepingCapacity: true)
        }
    }

    /// Reads `count` values, passing each with its index to `body`, in order.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when a width is over 64 or the bytes end early.
    static func read(
        count: Int, from reader: inout BinaryReader, _ body: (_ index: Int, _ value: UInt64) throws -> Void
    ) throws {
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: size) { group in
            var index = 0
            while index < count {
                let values = min(size, count - index)
                let width = Int(try reader.u8())
                guard width <= UInt64.bitWidth else { throw BinaryReader.Malformed(offset: reader.position - 1) }
                let bytes = try reader.bytes((width * values + 7) / 8)
                unpack(bytes, width: width, into: UnsafeMutableBufferPointer(rebasing: group[0..<values]))
                for value in group[0..<values] {
                    try body(index, value)
                    index += 1
                }
            }
        }
    }

    /// Unpacks `values.count` numbers of `width` bits from `bytes` into `values`.
    private static func unpack(
        _ bytes: UnsafeRawBufferPointer, width: Int, into values: UnsafeMutableBufferPointer<UInt64>
    ) {
        let mask: UInt64 = width == 64 ? .max : (1 << width) - 1
        // Whole loads while eight bytes remain from a value's first byte; bytes one at a time after.
        let wholeLoads = bytes.count >= 8 ? bytes.count - 7 : 0
        var bit = 0
        for index in values.indices {
            let start = bit &>> 3
            let shift = bit & 7
            var value: UInt64
            if start < wholeLoads {
                value = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)) &>> shift
                // A value of more than 56 bits may end in a ninth byte.
                if width &+ shift > 64 { value |= UInt64(bytes[start + 8]) &<< (64 &- shift) }
            } else {
                value = 0
                for byte in start..<bytes.count { value |= UInt64(bytes[byte]) &<< ((byte &- start) &* 8) }
                value &>>= shift
            }
            values[index] = value & mask
            bit &+= width
        }
    }
}
