import Foundation

extension Store {
    /// For a store opened read-only: applies the commits a writer (another process) appended to
    /// the log since this store last looked, and returns the newest committed sequence.
    ///
    /// Follows the active segment and the segments a writer started after it. When the writer
    /// compacted the segments this store reads, it stops following (reopen to see later
    /// commits) and logs that at debug. A record still being written is applied on a later call.
    /// Costs one read of the bytes appended, and one manifest read when the active segment ends.
    /// A store opened for writing returns its newest sequence without reading.
    ///
    /// - Throws: ``StoreError`` `io`, `corrupt` (a complete record fails its checksum), `closed`.
    @discardableResult
    public func followLog() throws -> UInt64 {
        try checkOpen(writing: false)
        guard configuration.readOnly else { return lastSequence }
        return try appendLock.withLock { _ in
            var highestKeys = [Int64](repeating: 0, count: schema.entities.count)
            while true {
                let (file, start) = state.withLock { ($0.activeFile, $0.activeEnd) }
                let end = try followSegment(file, from: start, highestKeys: &highestKeys)
                state.withLock { state in
                    state.activeEnd = end
                    state.stats[file.id]?.fileBytes = end
                }
                guard try followNextSegment(after: file.id) else { break }
            }
            nextKeys.withLock { keys in
                for (entity, key) in highestKeys.enumerated() where key >= keys[entity] { keys[entity] = key + 1 }
            }
            CommitSignal.notify(self, sequence: lastSequence)
            return lastSequence
        }
    }

    /// Applies the complete records of `file` from `start`; returns where they end.
    private func followSegment(_ file: SegmentFile, from start: Int64, highestKeys: inout [Int64]) throws -> Int64 {
        let size = try file.size()
        guard size > start + Int64(RecordHeader.size) else { return start }
        let bytes = try file.read(at: start, count: Int(size - start))
        var position = 0
        while position < bytes.count {
            let outcome = bytes.withUnsafeBytes {
                Self.parseRecord(in: UnsafeRawBufferPointer(rebasing: $0[position...]))
            }
            guard case .success(let record) = outcome, record.sequence > lastSequence || record.kind == .compaction
            else { break }
            try replayRecord(
                record, bytes: bytes, at: position, file: file, recordOffset: start + Int64(position),
                highestKeys: &highestKeys)
            position += record.length
        }
        return start + Int64(position)
    }

    /// Opens the segment a writer started after `active`, when the manifest lists one right
    /// after the segments this store reads; returns whether it did.
    private func followNextSegment(after active: UInt32) throws -> Bool {
        let bytes = try StoreError.io("read manifest", path: manifestPath) { try io.readFile(manifestPath) }
        let manifest = try Manifest.decode(bytes, path: manifestPath)
        let order = state.withLock { $0.segmentOrder }
        guard manifest.segments.count > order.count else { return false }
        guard Array(manifest.segments.prefix(order.count)) == order else {
            logger.debug(
                "the writer compacted the log; reopen the store to see later commits", metadata: ["path": "\(path)"])
            return false
        }
        let id = manifest.segments[order.count]
        let file = try SegmentFile.open(id: id, directory: segmentsPath, storeID: storeID, writable: false, io: io)
        state.withLock { state in
            state.segmentOrder.append(id)
            state.files[id] = file
            state.stats[id] = SegmentStats(fileBytes: Int64(SegmentFile.headerSize))
            state.activeEnd = Int64(SegmentFile.headerSize)
        }
        return true
    }
}
