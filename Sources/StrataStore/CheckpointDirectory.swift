/// Where a checkpoint keeps a page of an object index, or one entity's fetch indexes, after its
/// head, and their checksum.
struct CheckpointPlace: Sendable, Hashable {
    /// The offset in the file.
    var offset: Int64
    /// The length in bytes.
    var length: Int
    /// The masked CRC32C of the bytes.
    var checksum: UInt32

    /// Appends the place: `u64` offset, `u32` or `u64` length (as `wideLength` says), `u32`
    /// masked CRC32C.
    func encode(wideLength: Bool, into writer: inout BinaryWriter) {
        writer.u64(UInt64(offset))
        if wideLength { writer.u64(UInt64(length)) } else { writer.u32(UInt32(length)) }
        writer.u32(checksum)
    }

    /// Parses a place written by ``encode(wideLength:into:)`` in a checkpoint file of
    /// `fileSize` bytes.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when it does not parse or lies outside the file.
    static func decode(from reader: inout BinaryReader, wideLength: Bool, fileSize: Int64) throws -> CheckpointPlace {
        let start = reader.position
        let offset = try reader.offset()
        let length = wideLength ? try reader.offset() : Int64(try reader.u32())
        let place = CheckpointPlace(offset: offset, length: Int(length), checksum: try reader.u32())
        guard offset <= fileSize, length <= fileSize - offset else { throw BinaryReader.Malformed(offset: start) }
        return place
    }
}

/// One entity's directory in a checkpoint's head: its live rows, where each of its object-index
/// pages is (``IndexPageCodec``) with its checksum, and where its fetch indexes are.
///
/// Layout: varint live count, varint page count, per page its `u64` offset, `u32` length and
/// `u32` masked CRC32C, then the fetch indexes' `u64` offset, `u64` length and `u32` masked
/// CRC32C.
struct CheckpointDirectory: Sendable {
    /// The entity's live rows.
    var liveCount: Int
    /// Each page, in key order.
    var pages: [CheckpointPlace] = []
    /// The entity's fetch indexes.
    var fetchIndexes = CheckpointPlace(offset: 0, length: 0, checksum: 0)

    /// The section's bytes (whose length does not depend on the offsets and checksums).
    func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 40 + 16 * pages.count)
        writer.varint(liveCount)
        writer.varint(pages.count)
        for page in pages { page.encode(wideLength: false, into: &writer) }
        fetchIndexes.encode(wideLength: true, into: &writer)
        return writer.bytes
    }

    /// Parses a directory section of a checkpoint file of `fileSize` bytes.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when it does not parse, places pages or fetch indexes
    ///   outside the file, or counts more live rows than its pages hold.
    static func decode(_ section: UnsafeRawBufferPointer, fileSize: Int64) throws -> CheckpointDirectory {
        var reader = BinaryReader(section)
        let liveCount = try reader.count(limit: Int(EntityIndex.maximumKey))
        let pageCount = try reader.count(limit: reader.remaining / 16)
        guard liveCount <= pageCount * IndexPage.capacity else { throw BinaryReader.Malformed(offset: 0) }
        var directory = CheckpointDirectory(liveCount: liveCount)
        directory.pages.reserveCapacity(pageCount)
        for _ in 0..<pageCount {
            directory.pages.append(try CheckpointPlace.decode(from: &reader, wideLength: false, fileSize: fileSize))
        }
        directory.fetchIndexes = try CheckpointPlace.decode(from: &reader, wideLength: true, fileSize: fileSize)
        return directory
    }
}

/// A checkpoint's fetch indexes of one entity, read after the store opened.
struct FetchIndexSection: Sendable {
    /// The checkpoint.
    let file: CheckpointFile
    /// Where the section is.
    let place: CheckpointPlace

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
