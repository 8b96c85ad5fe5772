import Foundation

/// The parts of the manifest that are not in ``StoreState``, guarded by the manifest lock, which
/// also serializes every manifest write, checkpoint and compaction switch.
struct ManifestStatus: Sendable {
    /// The newest checkpoint's id.
    var checkpoint: UInt32?
    /// The next id for a new segment or checkpoint file.
    var nextFileID: UInt32 = 1
    /// Whether commits keep history.
    var historyTracking = true

    /// Takes the next file id.
    mutating func takeFileID() -> UInt32 {
        defer { nextFileID += 1 }
        return nextFileID
    }
}

extension Store {
    /// The manifest's path.
    var manifestPath: String { path + "/manifest" }

    /// Writes a new manifest from the current state, atomically. Call with the manifest lock held.
    ///
    /// - Parameter unlessUnchanged: write nothing when the file holds that manifest already (a
    ///   store closed after reads only: its close then writes and syncs nothing).
    func publishManifest(_ status: ManifestStatus, unlessUnchanged: Bool = false) throws {
        let bytes = manifestBytes(status)
        if unlessUnchanged, let held = try? io.readFile(manifestPath), held == bytes { return }
        try StoreError.io("write manifest", path: manifestPath) {
            try io.replaceAtomically(manifestPath, with: bytes, directory: path)
        }
    }

    /// The manifest of the current state, encoded.
    private func manifestBytes(_ status: ManifestStatus) -> [UInt8] {
        let (segments, floor, last, requested, consumers) = state.withLock {
            ($0.segmentOrder, $0.historyFloor, $0.lastSequence, $0.requestedHistoryFloor, $0.consumers)
        }
        return Manifest(
            storeID: storeID, schema: schema, historyTracking: status.historyTracking, segments: segments,
            checkpoint: status.checkpoint, historyFloor: floor, lastSequence: last,
            nextKeys: nextKeys.withLock { $0 }, nextFileID: status.nextFileID, requestedHistoryFloor: requested,
            consumers: consumers, schemaHistory: schemaHistory
        ).encode()
    }

    /// Seals the active segment and starts a new one. Called with the append lock held (by the
    /// commit leader, or by `compact()`).
    ///
    /// - Throws: ``StoreError`` `io` or `diskFull` when the new segment or the manifest naming it
    ///   cannot be written. The sealed segment then stays the active one: appends never go to a
    ///   segment the manifest on disk does not name, which reopening would remove with its commits.
    func rollSegment() throws {
        try manifestLock.withLock { status in
            try sealActiveSegment()
            let id = status.takeFileID()
            let file = try SegmentFile.create(id: id, directory: segmentsPath, storeID: storeID, io: io)
            let sealedEnd = state.withLock { state in
                let sealedEnd = state.activeEnd
                state.stats[state.activeSegment]?.fileBytes = state.activeEnd
                state.segmentOrder.append(id)
                state.files[id] = file
                state.stats[id] = SegmentStats(fileBytes: Int64(SegmentFile.headerSize))
                state.activeEnd = Int64(SegmentFile.headerSize)
                state.preallocatedEnd = Int64(SegmentFile.headerSize)
                return sealedEnd
            }
            do {
                try publishManifest(status)
            } catch {
                state.withLock { state in
                    state.segmentOrder.removeLast()
                    state.files[id] = nil
                    state.stats[id] = nil
                    state.activeEnd = sealedEnd
                    state.preallocatedEnd = sealedEnd
                }
                file.markObsolete()
                throw error
            }
            logger.debug("started segment", metadata: ["segment": "\(id)"])
        }
    }
}

extension Store {
    /// Drops the space allocated past the end of the log in the active segment and syncs it.
    func sealActiveSegment() throws {
        spaceAllocating.wait()
        let (file, end) = state.withLock { ($0.activeFile, $0.activeEnd) }
        try StoreError.io("trim segment", path: file.path) { try io.ftruncate(file.fd, to: end) }
        state.withLock { $0.preallocatedEnd = end }
        try syncActiveSegment()
    }
}
