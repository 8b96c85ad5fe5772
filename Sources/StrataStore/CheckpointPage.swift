import Synchronization

/// A checkpoint file held open after the store opened, for its object-index and block-table
/// pages, which are read when first used (``IndexPage``, ``BlockTablePage``). Closed when no page
/// still needs it.
final class CheckpointFile: Sendable {
    /// The file's path (for errors).
    let path: String
    /// The open descriptor.
    let fd: Int32
    /// The number of blocks in the checkpoint's block table: a location naming a block past it is
    /// damage.
    let blockCount: Int
    /// The size of each segment of the checkpoint's list when it was opened, by id: a block of
    /// the table lying past its segment's end is damage.
    let segmentSizes: [UInt32: Int64]
    private let io: any FileIO
    private let damaged = Atomic<Bool>(false)

    /// Wraps an open descriptor of the checkpoint at `path`, whose block table has `blockCount`
    /// blocks in segments of `segmentSizes`.
    init(path: String, fd: Int32, blockCount: Int, segmentSizes: [UInt32: Int64], io: any FileIO) {
        self.path = path
        self.fd = fd
        self.blockCount = blockCount
        self.segmentSizes = segmentSizes
        self.io = io
    }

    deinit { io.close(fd) }

    /// Whether a page read from the file failed its verification: the store then stops naming
    /// the checkpoint in its manifest when it closes or checkpoints, so that the next open
    /// replays the whole log.
    var isDamaged: Bool { damaged.load(ordering: .acquiring) }

    /// Records that a page failed its verification (see ``isDamaged``).
    func markDamaged() { damaged.store(true, ordering: .releasing) }

    /// Reads `buffer.count` bytes at `offset`; returns how many there were (fewer at the end).
    ///
    /// - Throws: ``StoreError`` `io` when the read fails.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try StoreError.io("read checkpoint", path: path) { try io.readFully(fd, into: buffer, at: offset) }
    }

    /// Reads the page of `part` (the object index, the block table) at `offset` into `buffer`,
    /// whole, checks it against `checksum` and then with `check`; marks the file damaged when
    /// any of them finds it `corrupt`.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the file and the page's offset (or the place
    ///   `check` names), or `io`.
    func readPage(
        of part: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, checksum: UInt32,
        check: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        do {
            guard try read(into: buffer, at: offset) == buffer.count else {
                throw StoreError(.corrupt, "checkpoint ends inside a page of the \(part)", path: path, offset: offset)
            }
            guard CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(buffer))) == checksum else {
                throw StoreError(.corrupt, "a page of the \(part) fails its checksum", path: path, offset: offset)
            }
            try check(UnsafeRawBufferPointer(buffer))
        } catch let error as StoreError where error.code == .corrupt {
            markDamaged()
            throw error
        }
    }
}

/// Where one page of an entity's object index lies in a checkpoint file, and its checksum.
struct CheckpointPage: Sendable {
    /// The checkpoint.
    let file: CheckpointFile
    /// The page's stored bytes (``IndexPageCodec``) in the file, and their checksum.
    let place: CheckpointPlace

    /// Reads the page, decodes it into `buffer` (``IndexPage/byteCount`` bytes) and verifies it:
    /// its checksum, its packing, and that every location it holds names a block of the
    /// checkpoint.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the checkpoint and the page's offset, or `io`.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws {
        let blocks = UInt64(file.blockCount)
        let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: place.length, alignment: 8)
        defer { stored.deallocate() }
        try file.readPage(of: "object index", into: stored, at: place.offset, checksum: place.checksum) { page in
            do {
                try IndexPageCodec.decode(page, into: buffer)
            } catch is BinaryReader.Malformed {
                throw StoreError(
                    .corrupt, "a page of the object index does not decode", path: file.path, offset: place.offset)
            }
            for slot in 0..<IndexPage.capacity {
                let raw = buffer.load(fromByteOffset: slot * 8, as: UInt64.self)
                // The place is (block number + 1) << 16 | slot: a present row names a block.
                let block = RowLocation(raw: raw).place >> 16
                guard raw == 0 || (block >= 1 && block <= blocks) else {
                    throw StoreError(
                        .corrupt, "a page of the object index names a block the checkpoint does not have",
                        path: file.path, offset: place.offset)
                }
            }
        }
    }
}
