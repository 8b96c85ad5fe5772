extension Store {
    /// The most bytes one read of consecutive history records takes.
    static let historyReadSpan = 1 << 20

    /// Calls `body` with each retained history record after `sequence`, oldest first, parsed but
    /// with its rows still encoded, until it returns `false`: the record, the bytes holding it
    /// (from `start`), its history entry and its file. Records that follow one another in a
    /// segment are read together, up to ``historyReadSpan`` bytes a read.
    ///
    /// - Throws: ``StoreError`` `historyUnavailable` as ``forEachHistoryTransaction(after:_:)``;
    ///   `corrupt` for a record that fails its checksum; `io`; what `body` throws.
    func forEachHistoryRecord(
        after sequence: UInt64,
        _ body: (_ record: ParsedRecord, _ bytes: [UInt8], _ start: Int, _ entry: HistoryEntry, _ file: SegmentFile)
            throws -> Bool
    ) throws {
        guard configuration.historyTracking else {
            throw StoreError(.historyUnavailable, "history tracking is off for this store", path: path)
        }
        let (entries, files, floor) = state.withLock { state in
            let start = state.history.partitioningIndex { $0.sequence > sequence }
            return (Array(state.history[start...]), state.files, state.historyFloor)
        }
        guard sequence >= floor else {
            throw StoreError(
                .historyUnavailable, "history up to sequence \(floor) was deleted; asked for after \(sequence)",
                path: path)
        }
        var index = entries.startIndex
        while index < entries.endIndex {
            let first = entries[index]
            guard let file = files[first.segment] else {
                index += 1
                continue
            }
            // The run of records that follow `first` in its segment, within the read span.
            var end = index + 1
            var length = first.length
            while end < entries.endIndex, entries[end].segment == first.segment,
                entries[end].offset == first.offset + Int64(length),
                length + entries[end].length <= Self.historyReadSpan
            {
                length += entries[end].length
                end += 1
            }
            let bytes = try file.read(at: first.offset, count: length)
            for entry in entries[index..<end] {
                let start = Int(entry.offset - first.offset)
                let record = try Self.parseHistoryRecord(
                    bytes, at: start, length: entry.length, file: file, offset: entry.offset)
                guard try body(record, bytes, start, entry, file) else { return }
            }
            index = end
        }
    }

    /// Parses the history record of `length` bytes at `start` of `bytes` (at `offset` of `file`).
    ///
    /// - Throws: ``StoreError`` `corrupt` when it is cut short, fails its checksum or does not parse.
    static func parseHistoryRecord(
        _ bytes: [UInt8], at start: Int, length: Int, file: SegmentFile, offset: Int64
    ) throws -> ParsedRecord {
        let outcome = bytes.withUnsafeBytes { raw -> Result<ParsedRecord, BinaryReader.Malformed> in
            guard start + length <= raw.count else {
                return .failure(BinaryReader.Malformed(offset: raw.count - start))
            }
            return parseRecord(in: UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]))
        }
        switch outcome {
        case .success(let record): return record
        case .failure(let error):
            throw StoreError(
                .corrupt, "history record fails its checksum or does not parse", path: file.path,
                offset: offset + Int64(error.offset))
        }
    }
}
