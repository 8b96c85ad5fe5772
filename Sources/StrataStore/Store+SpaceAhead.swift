import Synchronization
extension Store {
    /// Whether the active segment has less than half a ``preallocationWindow`` of space
    /// allocated past the log and room for more, with a maintenance thread to allocate it: a
    /// commit then asks that thread for the next window (``allocateSpaceAhead()``), so that no
    /// later commit group waits while the window's zeros are written and synced.
    func needsSpaceAhead(_ state: StoreState) -> Bool {
        configuration.backgroundMaintenance
            && state.preallocatedEnd - state.activeEnd < Int64(Self.preallocationWindow / 2)
            && state.preallocatedEnd < Int64(configuration.segmentSize)
    }

    /// Asks the maintenance thread for the active segment's next window when it needs one and
    /// nobody asked yet; returns whether this call asked (the caller wakes the thread).
    func requestSpaceAhead(_ state: StoreState) -> Bool {
        needsSpaceAhead(state) && !spaceAheadRequested.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Allocates the active segment's next window of space past what is allocated (up to the
    /// segment size), writes it with zeros and syncs them, then makes it the room commits write
    /// into. Run by the maintenance thread. Only the window's claim takes the append lock: the
    /// commit groups meanwhile write and sync the log before the window, and a group that needs
    /// the window, a roll to a new segment or an undone append waits for it (``spaceAllocating``).
    /// The window is synced before commits write into it, so that their syncs have no zeros to
    /// flush and no extents to convert.
    ///
    /// - Throws: ``StoreError`` `io` or `diskFull` when the space cannot be allocated or written
    ///   (nothing is lost: the log ends where it did, and a commit allocates what it needs);
    ///   when the sync fails the store stops accepting writes, as after a commit's failed sync.
    func allocateSpaceAhead() throws {
        let claim = appendLock.withLock { _ -> (file: SegmentFile, start: Int64, length: Int64)? in
            state.withLock { state in
                // Past the log: a store opened on a log without allocated space knows none.
                let start = max(state.preallocatedEnd, state.activeEnd)
                guard needsSpaceAhead(state), start < Int64(configuration.segmentSize) else { return nil }
                spaceAllocating.enter()
                return (
                    state.activeFile, start,
                    min(Int64(Self.preallocationWindow), Int64(configuration.segmentSize) - start)
                )
            }
        }
        guard let claim else { return }
        defer { spaceAllocating.leave() }
        try StoreError.io("allocate segment space", path: claim.file.path) {
            try io.preallocate(claim.file.fd, offset: claim.start, length: claim.length)
            try io.writeZeros(claim.file.fd, at: claim.start, length: claim.length)
        }
        do {
            try StoreError.io("sync segment", path: claim.file.path) { try io.fdatasync(claim.file.fd) }
        } catch { throw failStop(error, "fdatasync") }
        state.withLock { $0.preallocatedEnd = claim.start + claim.length }
        counters.spaceAllocationsAhead.add(1)
        logger.debug("allocated segment space ahead of the log", metadata: ["segment": "\(claim.file.id)"])
    }
}
