/// Copies the rows a fetch reads for its objects (a scan, a read by keys through a fetch index
/// or a sort key's walk) into shared heap blocks of about 4 KiB, one after the other, instead of
/// a heap block each (``EncodedRow/init(copying:offsets:format:)``).
///
/// A fetch of every row made an object and a heap block for each row, and freed both again with
/// the objects: `malloc` and `free` were a quarter of a full fetch's instructions, the row's
/// block ~650 of the ~3,840 an object (callgrind, W6 at 20,000 rows; with shared blocks 3,510,
/// and at 100,000 rows 1.86M -> 2.0M objects a second in four alternating runs, the peak memory
/// growth 46 -> 44 MB). A block lives as long as one of its rows does, so a row kept alone keeps
/// up to 4 KiB; the rows a fetch reads are kept by the objects it makes, which are usually kept
/// or dropped together. Rows a cache keeps one by one (the coordinator's row cache, a fault's
/// row) are not copied here, nor are the rows of a block a fetch takes half or more of, which
/// stay in place in the block (``EncodedRow/storage(inPlace:format:)``). A row of another format
/// than the block's starts a new block; a row larger than a quarter of a block gets one of its
/// own.
struct EncodedRowArena {
    /// The bytes of a shared block.
    static let blockCapacity = 4096

    /// The block rows are copied into, the format of its rows and the bytes of it taken.
    private var current: (storage: EncodedRow.Storage, format: EncodedRowFormat, used: Int)?

    /// A copy of `bytes`, one row of `format` checked by
    /// ``EncodedRow/withCheckedOffsets(_:format:block:slot:recordsCheck:_:)``, with the `offsets`
    /// it gave.
    mutating func copy(
        _ bytes: UnsafeRawBufferPointer, offsets: UnsafeRawPointer?, format: EncodedRowFormat
    ) -> EncodedRow {
        let columns = format.codec.storedColumns
        let size = EncodedRow.size(byteCount: bytes.count, storedColumns: columns)
        guard size <= Self.blockCapacity / 4 else {
            return EncodedRow(copying: bytes, offsets: offsets, format: format)
        }
        guard let block = current, block.used + size <= Self.blockCapacity, block.format === format else {
            let storage = EncodedRow.storage(format: format, capacity: Self.blockCapacity)
            current = (storage, format, 0)
            return copy(bytes, offsets: offsets, format: format)
        }
        EncodedRow.write(bytes, offsets: offsets, storedColumns: columns, into: block.storage, at: block.used)
        current!.used += size
        return EncodedRow(storage: block.storage, start: block.used)
    }
}
