extension Checkpoint {
    /// The most block numbers a block table hands out: a row location keeps a block number plus
    /// one in 32 bits.
    static let maximumBlockCount = Int(UInt32.max) - 1

    /// The block table section: varint count of block numbers, then runs until the count is
    /// covered, each a varint number of dropped blocks (in no segment of the checkpoint's list),
    /// a varint number of kept blocks, and per kept block `u32` segment, `u32` offset, `u32`
    /// length, `u16` entity. A table is as long as the blocks of live segments, however many
    /// blocks compaction deleted before.
    static func encodeBlockTable(_ state: StoreState) -> [UInt8] {
        let live = Set(state.segmentOrder)
        var writer = BinaryWriter(capacity: 16)
        writer.varint(state.blocks.count)
        var dropped = 0
        var kept: [BlockLocation] = []
        func writeRun() {
            writer.varint(dropped)
            writer.varint(kept.count)
            for block in kept {
                writer.u32(block.segment)
                writer.u32(block.offset)
                writer.u32(block.length)
                writer.u16(block.entity)
            }
            dropped = 0
            kept.removeAll(keepingCapacity: true)
        }
        func drop(_ numbers: Int) {
            guard numbers > 0 else { return }
            if !kept.isEmpty { writeRun() }
            dropped += numbers
        }
        var next = 0
        for range in state.blocks.occupiedRanges {
            drop(range.lowerBound - next)
            for number in range {
                let block = state.blocks[number]
                if live.contains(block.segment) { kept.append(block) } else { drop(1) }
            }
            next = range.upperBound
        }
        drop(state.blocks.count - next)
        if dropped > 0 || !kept.isEmpty { writeRun() }
        return writer.bytes
    }

    /// Reads a block table section into `blocks`, dropped numbers taking no storage.
    ///
    /// - Throws: `BinaryReader.Malformed` when the section does not parse, a run is empty, or the
    ///   runs do not add up to the count.
    static func decodeBlockTable(_ reader: inout BinaryReader, into blocks: inout ChunkedArray<BlockLocation>) throws {
        let count = try reader.count(limit: maximumBlockCount)
        while blocks.count < count {
            let start = reader.position
            let dropped = try reader.count(limit: count - blocks.count)
            // 14 bytes a kept block: a run is at most what the section holds.
            let kept = try reader.count(limit: min(count - blocks.count - dropped, reader.remaining / 14))
            guard dropped + kept > 0 else { throw BinaryReader.Malformed(offset: start) }
            blocks.appendVacant(dropped, filler: .dropped)
            // One bounds check for the run, then fixed-width loads: the table is most of an open's
            // work at millions of rows.
            let run = try reader.bytes(kept * 14)
            func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: run.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
            blocks.append(
                contentsOf: (0..<kept).map { index in
                    let at = index * 14
                    return BlockLocation(
                        segment: u32(at), offset: u32(at + 4), length: u32(at + 8),
                        entity: UInt16(littleEndian: run.loadUnaligned(fromByteOffset: at + 12, as: UInt16.self)))
                })
        }
    }
}
