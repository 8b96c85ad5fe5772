internal import CLZ4

/// The liblz4 block API, wrapped so that no C type leaves this file.
enum LZ4 {
    /// Appends the LZ4 compression of `source` to `output` and returns the compressed size, or
    /// returns `nil` (appending nothing) when compression would not save at least 1/16 of the size.
    static func compress(_ source: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) -> Int? {
        guard source.count > 64, source.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let bound = Int(LZ4_compressBound(Int32(source.count)))
        let start = output.count
        let limit = source.count - source.count / 16
        var produced = 0
        output.append(contentsOf: repeatElement(0, count: bound))
        output.withUnsafeMutableBytes { raw in
            let destination = raw.baseAddress!.advanced(by: start).assumingMemoryBound(to: CChar.self)
            produced = Int(LZ4_compress_default(
                source.baseAddress!.assumingMemoryBound(to: CChar.self), destination,
                Int32(source.count), Int32(limit)))
        }
        guard produced > 0 else {
            output.removeLast(bound)
            return nil
        }
        output.removeLast(bound - produced)
        return produced
    }

    /// Decompresses `source` into exactly `rawCount` bytes.
    ///
    /// - Returns: the bytes, or `nil` when `source` is not an LZ4 block of that size.
    static func decompress(_ source: UnsafeRawBufferPointer, rawCount: Int) -> [UInt8]? {
        guard rawCount >= 0, source.count <= Int(Int32.max) else { return nil }
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: rawCount) { buffer, initialized in
            let produced = LZ4_decompress_safe(
                source.baseAddress?.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(rawCount))
            ok = Int(produced) == rawCount
            initialized = ok ? rawCount : 0
        }
        return ok ? bytes : nil
    }
}
