import Foundation

/// A block the warm-up loads: its number, place and file.
private struct WarmUpBlock: Sendable {
    var number: UInt32
    var location: BlockLocation
    var file: SegmentFile
}

extension Store {
    /// Loads the newest blocks of the log into the block cache on a background thread once the
    /// store is open, as a database warms its buffer pool when it starts: the first reads after
    /// opening (faults, fetches) find their blocks decoded instead of each paying a `pread` and
    /// an LZ4 decompression on the reading thread.
    ///
    /// Blocks go in newest first, into the room the cache has free (never evicting what reads
    /// cached), until the cache is full or the blocks whose stored bytes add up to its capacity
    /// are loaded; a block a read cached first is skipped. The thread stops at its next block
    /// once the store closes (``close()`` waits for it) or is released, and at the first block
    /// that does not read: the read that needs it reports the error.
    func warmBlockCacheInBackground() {
        guard cache.capacity > 0, state.withLock({ !$0.blocks.isEmpty }) else { return }
        let (group, state, cache, stop) = (blockCacheWarming, state, cache, blockCacheWarmUpStop)
        group.enter()
        // Holds the state, the cache and the stop flag, never the store: the thread that lets a
        // store's last reference go closes its lock file, so a store dropped while this thread
        // held it stayed locked until the block in hand was loaded, and opening it again at once
        // failed with `locked` (as `make tsan`, whose threads run slower, found).
        let thread = Thread {
            defer { group.leave() }
            for block in Self.blocksToWarm(state, capacity: cache.capacity) {
                guard !stop.isRaised else { return }
                guard !cache.contains(UInt64(block.number)) else { continue }
                guard let decoded = try? Self.readBlock(block.location, file: block.file),
                    cache.insertIfRoom(
                        decoded, forKey: UInt64(block.number), cost: decoded.cost, readAt: decoded.rowDataAddress)
                else { return }
            }
        }
        thread.name = "strata-block-cache-warm-up"
        thread.start()
    }

    /// The newest blocks whose stored bytes add up to the cache's capacity, newest first, with
    /// their places and files (taken on the warm-up's thread, not the opening one). The block
    /// table and files are copied under the state's lock, which copies only their chunk lists,
    /// and walked outside it: the walk covers as many blocks as fill the cache, and the first
    /// reads after an open would wait for it.
    private static func blocksToWarm(_ state: LockedState, capacity: Int) -> [WarmUpBlock] {
        var (table, files) = state.withLock { ($0.blocks, $0.files) }
        var blocks: [WarmUpBlock] = []
        var bytes = 0
        for number in table.occupiedRanges.reversed().lazy.flatMap({ $0.reversed() }) {
            guard bytes < capacity else { break }
            // The checkpoint's pages of the newest blocks are read here, on the warm-up's thread
            // (and shared with the state's table); one that fails ends the walk.
            guard let location = try? table.location(number) else { break }
            guard let file = files[location.segment] else { continue }
            blocks.append(WarmUpBlock(number: UInt32(number), location: location, file: file))
            bytes += Int(location.length)
        }
        return blocks
    }
}
