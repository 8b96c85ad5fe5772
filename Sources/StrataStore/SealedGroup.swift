/// The bytes a commit group appends to the log: its records, each sealed with its sequence
/// number (``RecordHeader/seal(_:at:sequence:)``), in order.
///
/// They are gathered in one buffer, written with one `pwrite`; but a group of one record of
/// ``recordWrittenInPlace`` bytes or more (a bulk load) is written from the record's own bytes
/// after a sealed copy of its header. Gathering copied it into fresh memory, whose page faults
/// cost more than the copy: ~8 ms of a 100,000-row batch insert (12 MB). A crash between the
/// two writes leaves a record whose checksum fails, a torn tail as after a short write.
enum SealedGroup {
    /// The records, sealed, one after the other.
    case gathered([UInt8])
    /// One record, its sealed header apart.
    case inPlace(header: [UInt8], record: [UInt8])

    /// The fewest bytes of a group of one record that is written from the record's own bytes.
    static let recordWrittenInPlace = 1 << 20

    /// Seals `records`, numbered from `firstSequence` on.
    init(_ records: [[UInt8]], firstSequence: UInt64) {
        if records.count == 1, records[0].count >= Self.recordWrittenInPlace {
            var header = [UInt8](repeating: 0, count: RecordHeader.size)
            records[0].withUnsafeBytes { record in
                header.withUnsafeMutableBytes { RecordHeader.seal(record, sequence: firstSequence, into: $0) }
            }
            self = .inPlace(header: header, record: records[0])
            return
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(records.reduce(0) { $0 + $1.count })
        for (position, record) in records.enumerated() {
            let start = buffer.count
            buffer.append(contentsOf: record)
            RecordHeader.seal(&buffer, at: start, sequence: firstSequence + UInt64(position))
        }
        self = .gathered(buffer)
    }

    /// The number of bytes.
    var count: Int {
        switch self {
        case .gathered(let bytes): bytes.count
        case .inPlace(_, let record): record.count
        }
    }

    /// Writes the bytes to `fd` at `offset` through `io`.
    ///
    /// - Throws: what ``FileIO/writeAll(_:_:at:)`` throws.
    func write(to fd: Int32, at offset: Int64, io: any FileIO) throws {
        switch self {
        case .gathered(let bytes):
            try bytes.withUnsafeBytes { try io.writeAll(fd, $0, at: offset) }
        case .inPlace(let header, let record):
            try header.withUnsafeBytes { try io.writeAll(fd, $0, at: offset) }
            try record.withUnsafeBytes { record in
                try io.writeAll(
                    fd, UnsafeRawBufferPointer(rebasing: record[RecordHeader.size...]),
                    at: offset + Int64(RecordHeader.size))
            }
        }
    }
}
