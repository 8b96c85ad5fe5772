/// Where a checkpoint keeps one entity's fetch indexes, after its head, and their checksum.
struct FetchIndexPlace: Sendable, Hashable {
    /// The offset in the file.
    var offset: Int64
    /// The length in bytes.
    var length: Int
    /// The masked CRC32C of the bytes.
    var checksum: UInt32
}

/// One entity's directory in a checkpoint's head: its live rows, where its object-index pages
/// are and their checksums, and where its fetch indexes are.
///
/// Layout: varint live count, varint page count, `u64` offset of the first page (the others
/// follow it, 48 KiB each), `u32` masked CRC32C per page, then the fetch indexes' `u64` offset,
/// `u64` length and `u32` masked CRC32C.
struct CheckpointDirectory: Sendable {
    /// The entity's live rows.
    var liveCount: Int
    /// The offset of the entity's first page.
    var pagesOffset: Int64
    /// The masked CRC32C of each page, in key order.
    var pageChecksums: [UInt32] = []
    /// The entity's fetch indexes.
    var fetchIndexes = FetchIndexPlace(offset: 0, length: 0, checksum: 0)

    /// The section's bytes, every offset moved by `shift` (written relative to the part after the
    /// head, whose start is known last; the length does not depend on it).
    func encoded(shiftedBy shift: Int64) -> [UInt8] {
        var writer = BinaryWriter(capacity: 40 + 4 * pageChecksums.count)
        writer.varint(liveCount)
        writer.varint(pageChecksums.count)
        writer.u64(UInt64(pagesOffset + shift))
        for checksum in pageChecksums { writer.u32(checksum) }
        writer.u64(UInt64(fetchIndexes.offset + shift))
        writer.u64(UInt64(fetchIndexes.length))
        writer.u32(fetchIndexes.checksum)
        return writer.bytes
    }

    /// Parses a directory section of a checkpoint file of `fileSize` bytes.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when it does not parse, or places pages or fetch
    ///   indexes outside the file, or counts more live rows than its pages hold.
    static func decode(_ section: UnsafeRawBufferPointer, fileSize: Int64) throws -> CheckpointDirectory {
        var reader = BinaryReader(section)
        let liveCount = try reader.count(limit: Int(EntityIndex.maximumKey))
        let pageCount = try reader.count(limit: reader.remaining / 4)
        let pagesOffset = try reader.offset()
        var directory = CheckpointDirectory(liveCount: liveCount, pagesOffset: pagesOffset)
        directory.pageChecksums.reserveCapacity(pageCount)
        for _ in 0..<pageCount { directory.pageChecksums.append(try reader.u32()) }
        let fetchAt = reader.position
        directory.fetchIndexes = FetchIndexPlace(
            offset: try reader.offset(), length: Int(try reader.offset()), checksum: try reader.u32())
        let pagesBytes = Int64(pageCount) * Int64(IndexPage.byteCount)
        guard pagesOffset <= fileSize - pagesBytes, liveCount <= pageCount * IndexPage.capacity else {
            throw BinaryReader.Malformed(offset: 0)
        }
        let fetch = directory.fetchIndexes
        guard fetch.offset <= fileSize, Int64(fetch.length) <= fileSize - fetch.offset else {
            throw BinaryReader.Malformed(offset: fetchAt)
        }
        return directory
    }
}

/// A checkpoint's fetch indexes of one entity, read after the store opened.
struct FetchIndexSection: Sendable {
    /// The checkpoint.
    let file: CheckpointFile
    /// Where the section is.
    let place: FetchIndexPlace

    /// The section's bytes, checksum verified.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the checkpoint and the section's offset, or `io`.
    func read() throws -> [UInt8] {
        var failure: (any Error)?
        let bytes = [UInt8](unsafeUninitializedCapacity: place.length) { buffer, initialized in
            do {
                initialized = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: place.offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        guard bytes.count == place.length, CRC32C.mask(CRC32C.checksum(bytes)) == place.checksum else {
            throw StoreError(.corrupt, "fetch indexes fail their checksum", path: file.path, offset: place.offset)
        }
        return bytes
    }
}
