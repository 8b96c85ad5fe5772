extension Store {
    /// Whether the active segment has less than half a ``preallocationWindow`` of space
    /// allocated past the log and room for more, with a maintenance thread to allocate it: a
    /// commit then asks that thread for the next window (``allocateSpaceAhead()``), so that no
    /// later commit group waits while the window's zeros are written and synced.
    func needsSpaceAhead(_ state: StoreState) -> Bool {
        configuration.backgroundMaintenance && state.preallocatedEnd - state.activeEnd < Int64(Self.preallocationWindow / 2)
            && state.preallocatedEnd < Int64(configuration.segmentSize)
    }

    /// Allocates the active segment's next window of space past what is allocated (up to the
    /// segment size) and writes it with zeros, as a commit group does when it finds too little
    /// room (see ``preallocationWindow``), then syncs them outside the append lock: the later
    /// groups that overwrite them sync only their own bytes. Run by the maintenance thread.
    ///
    /// - Throws: ``StoreError`` `io` or `diskFull` when the space cannot be allocated or written
    ///   (nothing is lost: the log ends where it did, and a commit allocates what it needs);
    ///   when the sync fails the store stops accepting writes, as after a commit's failed sync.
    func allocateSpaceAhead() throws {
        let allocated = try appendLock.withLock { _ -> SegmentFile? in
            let (file, start, wanted) = state.withLock { state in
                (state.files[state.activeSegment]!, state.preallocatedEnd, needsSpaceAhead(state))
            }
            guard wanted else { return nil }
            let length = min(Int64(Self.preallocationWindow), Int64(configuration.segmentSize) - start)
            try StoreError.io("allocate segment space", path: file.path) {
                try io.preallocate(file.fd, offset: start, length: length)
                try io.writeZeros(file.fd, at: start, length: length)
            }
            state.withLock { $0.preallocatedEnd = start + length }
            counters.spaceAllocationsAhead.add(1)
            return file
        }
        guard let allocated else { return }
        do {
            try StoreError.io("sync segment", path: allocated.path) { try io.fdatasync(allocated.fd) }
        } catch { throw failStop(error, "fdatasync") }
        logger.debug("allocated segment space ahead of the log", metadata: ["segment": "\(allocated.id)"])
    }
}
