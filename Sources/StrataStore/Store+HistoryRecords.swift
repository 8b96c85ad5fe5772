extension Store {
    /// The most bytes one read of consecutive history records takes.
    static let historyReadSpan = 1 << 20

    /// The most history entries ``forEachHistoryRecord(after:_:)`` copies from the store's
    /// directory at a time: reading from the oldest retained transaction does not copy the
    /// whole directory (tens of megabytes at a million retained transactions).
    static let historyEntriesPerCopy = 4096

    /// Calls `body` with each retained history record after `sequence`, oldest first, parsed but
    /// with its rows still encoded, until it returns `false`: the record, the bytes holding it
    /// (from `start`), its history entry and its file. Records that follow one another in a
    /// segment are read together, up to ``historyReadSpan`` bytes a read. The records are those
    /// retained when the call starts; their entries are copied from the store's directory
    /// ``historyEntriesPerCopy`` at a time.
    ///
    /// - Throws: ``StoreError`` `historyUnavailable` as ``forEachHistoryTransaction(after:_:)``,
    ///   or when history not yet read is deleted while the call reads; `corrupt` for a record
    ///   that fails its checksum; `io`; what `body` throws.
    func forEachHistoryRecord(
        after sequence: UInt64,
        _ body: (_ record: ParsedRecord, _ bytes: [UInt8], _ start: Int, _ entry: HistoryEntry, _ file: SegmentFile)
            throws -> Bool
    ) throws {
        guard configuration.historyTracking else {
            throw StoreError(.historyUnavailable, "history tracking is off for this store", path: path)
        }
        var last = sequence
        // The newest sequence retained when the read started, taken at the first copy.
        var through: UInt64?
        while true {
            let (entries, files, floor, newest) = state.withLock { state in
                let start = state.history.partitioningIndex { $0.sequence > last }
                let end = min(start + Self.historyEntriesPerCopy, state.history.endIndex)
                return (Array(state.history[start..<end]), state.files, state.historyFloor, state.history.last?.sequence)
            }
            guard last >= floor else {
                throw StoreError(
                    .historyUnavailable,
                    through == nil
                        ? "history up to sequence \(floor) was deleted; asked for after \(sequence)"
                        : "history up to sequence \(floor) was deleted while it was read after \(last)",
                    path: path)
            }
            let bound = through ?? newest ?? 0
            through = bound
            let wanted = entries.prefix { $0.sequence <= bound }
            guard !wanted.isEmpty else { return }
            guard try forEachRecord(of: wanted, files: files, body) else { return }
            last = wanted[wanted.endIndex - 1].sequence
        }
    }

    /// Calls `body` as ``forEachHistoryRecord(after:_:)`` does with the records of `entries`,
    /// found in `files`; returns whether it went through them all (`body` did not return
    /// `false`).
    private func forEachRecord(
        of entries: ArraySlice<HistoryEntry>, files: SegmentFiles,
        _ body: (_ record: ParsedRecord, _ bytes: [UInt8], _ start: Int, _ entry: HistoryEntry, _ file: SegmentFile)
            throws -> Bool
    ) throws -> Bool {
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
                guard try body(record, bytes, start, entry, file) else { return false }
            }
            index = end
        }
        return true
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
