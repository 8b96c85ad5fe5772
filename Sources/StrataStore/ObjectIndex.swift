/// Where a block sits in the log: 16 bytes a block.
struct BlockLocation: Sendable, Hashable {
    /// The segment holding the block.
    var segment: UInt32
    /// The offset of the block header in the segment.
    var offset: UInt32
    /// The length of header and stored bytes.
    var length: UInt32
    /// The entity of the block's rows.
    var entity: UInt16

    /// What the block table holds for a block of a deleted segment once it dropped it: segment
    /// 0, which no segment has (their ids start at 1).
    static let dropped = BlockLocation(segment: 0, offset: 0, length: 0, entity: 0)
}

/// A row's place in the log, packed in 8 bytes: `(blockNumber + 1) << 16 | slot`, 0 meaning
/// absent, and in the top 16 bits, when known, where the row starts among its block's row data
/// plus one (``rowStart``).
///
/// The start lets a read go straight to the row's bytes instead of reading the block's offset
/// table first (one cache miss fewer a fault). It is known for rows this process wrote or
/// moved, and kept by checkpoints; a row known from replaying the log, or starting 64 KiB or
/// more into its block's data, has none (0), and is found through the offset table. It is not
/// part of the place: two locations are equal when their block and slot are, and ``place``
/// orders them.
struct RowLocation: Hashable, Sendable {
    /// The packed value, start included (what checkpoints keep: a reader without starts
    /// truncates the block number to 32 bits, dropping it).
    var raw: UInt64

    /// The absent location.
    static let absent = RowLocation(raw: 0)

    /// The bits of ``raw`` that hold the block and slot.
    private static let placeMask: UInt64 = 0xFFFF_FFFF_FFFF

    /// Packs a block number and slot, with the row's start among the block's row data when
    /// known (`nil`, or 65,535 or more, keeps none).
    init(block: UInt32, slot: Int, start: Int? = nil) {
        raw = (UInt64(block) + 1) << 16 | UInt64(slot)
        if let start, start >= 0, start < 0xFFFF { raw |= UInt64(start + 1) << 48 }
    }
    /// Wraps a packed value.
    init(raw: UInt64) { self.raw = raw }

    /// Whether a row is there.
    var isPresent: Bool { raw != 0 }
    /// The global block number.
    var block: UInt32 { UInt32(truncatingIfNeeded: (place >> 16) - 1) }
    /// The slot within the block.
    var slot: Int { Int(raw & 0xFFFF) }
    /// The block and slot packed as `(blockNumber + 1) << 16 | slot`, without the start: the
    /// order of rows in the log.
    var place: UInt64 { raw & Self.placeMask }
    /// Where the row starts among its block's row data, when known.
    var rowStart: Int? {
        let stored = Int(raw >> 48)
        return stored == 0 ? nil : stored - 1
    }

    /// The same place, with the start of `other` when this one has none: for a row copied
    /// with its whole block.
    func keepingStart(of other: RowLocation) -> RowLocation {
        raw >> 48 == 0 ? RowLocation(raw: raw | other.raw & ~Self.placeMask) : self
    }

    static func == (lhs: RowLocation, rhs: RowLocation) -> Bool { lhs.place == rhs.place }

    func hash(into hasher: inout Hasher) { hasher.combine(place) }
}

/// Byte counts of one segment, kept exactly as rows are superseded.
struct SegmentStats: Sendable, Hashable {
    /// Encoded bytes of rows still live in the segment.
    var liveBytes: Int64 = 0
    /// Encoded bytes of rows superseded or deleted since they were written.
    var deadBytes: Int64 = 0
    /// The size of the segment file (its end of log for the active segment).
    var fileBytes: Int64 = 0
    /// The newest commit sequence the segment holds (0 if none).
    var maxSequence: UInt64 = 0

    /// The fraction of row bytes that are dead.
    var deadFraction: Double {
        let total = liveBytes + deadBytes
        return total == 0 ? (fileBytes > Int64(SegmentFile.headerSize) ? 1 : 0) : Double(deadBytes) / Double(total)
    }
}

/// Where a retained history transaction record is: 24 bytes, one per retained transaction,
/// so the fields are stored at the widths the log allows (a place in a segment is a `UInt32`, as
/// in ``BlockLocation``) and read at the widths their users compute with.
struct HistoryEntry: Sendable, Hashable {
    /// The commit's sequence number.
    var sequence: UInt64
    /// The segment holding the record.
    var segment: UInt32
    /// The record's offset in the segment.
    private var storedOffset: UInt32
    /// The record's length.
    private var storedLength: UInt32
    /// ``firstBlock``, or ``noBlock``.
    private var storedFirstBlock: UInt32

    /// The stored first block of an entry that has none.
    private static let noBlock = UInt32.max

    /// An entry for the record of `sequence` at `offset` of `segment`, `length` bytes long.
    /// The offset and length fit a `UInt32`: the writer places no record past that in a
    /// segment, and ``Checkpoint`` refuses a checkpoint naming one.
    init(sequence: UInt64, segment: UInt32, offset: Int64, length: Int, firstBlock: UInt32? = nil) {
        self.sequence = sequence
        self.segment = segment
        storedOffset = UInt32(offset)
        storedLength = UInt32(length)
        storedFirstBlock = firstBlock ?? Self.noBlock
    }

    /// The record's offset in the segment.
    var offset: Int64 {
        get { Int64(storedOffset) }
        set { storedOffset = UInt32(newValue) }
    }

    /// The record's length.
    var length: Int { Int(storedLength) }

    /// The number of the record's first block (its blocks are numbered in a row), when this
    /// process registered them; `nil` for records known from a checkpoint, which does not keep
    /// it. A replay reads the record's blocks from the block cache by these numbers.
    var firstBlock: UInt32? {
        get { storedFirstBlock == Self.noBlock ? nil : storedFirstBlock }
        set { storedFirstBlock = newValue ?? Self.noBlock }
    }
}

/// An (entity, primary key) pair.
struct EntityKey: Hashable, Sendable {
    /// The entity id.
    var entity: Int
    /// The primary key.
    var key: Int64

    /// The tables' hash (``TableHashing``): the key with the table's seed, and the entity spread
    /// by a second odd multiplier.
    func _rawHashValue(seed: Int) -> Int {
        TableHashing.hash(
            UInt64(bitPattern: key), seed: seed, adding: UInt64(truncatingIfNeeded: entity) &* 0xC2B2_AE3D_27D4_EB4F)
    }
}
