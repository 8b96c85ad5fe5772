import Foundation

extension Store {
    /// Parses a checkpoint's fetch indexes on a background thread, so that opening returns as
    /// soon as the object index is loaded. Anything that needs the fetch indexes (commits,
    /// index lookups, replay of indexed rows, checkpoints, compaction) waits for them.
    ///
    /// Should the sections not parse (their checksums passed, so only a bug or a forged checksum
    /// could cause it), the first that waits for the indexes rebuilds them from the live rows.
    func loadFetchIndexesInBackground(_ sections: [FetchIndexSection]) {
        let (group, schema, state, unreadable) = (fetchIndexLoading, schema, state, fetchIndexesUnreadable)
        group.enter()
        // Holds the state, never the store: a store released without close() closes its lock
        // file at once, so that it can be opened again at once.
        let thread = Thread {
            defer { group.leave() }
            if let decoded = try? Checkpoint.readFetchIndexes(sections, schema: schema) {
                state.withLock { $0.fetchIndexes = decoded }
            } else {
                unreadable.raise()
            }
        }
        thread.name = "strata-fetch-index-load"
        thread.start()
    }

    /// Waits until the fetch indexes are loaded (at once when they are), rebuilding them from
    /// the rows when the checkpoint's did not parse.
    func waitForFetchIndexes() {
        fetchIndexLoading.wait()
        guard fetchIndexesUnreadable.isRaised else { return }
        fetchIndexesRebuilt.withLock { rebuilt in
            guard !rebuilt else { return }
            logger.error("checkpoint fetch indexes unreadable; rebuilding them from the rows", metadata: ["path": "\(path)"])
            rebuildFetchIndexes()
            rebuilt = true
        }
    }

    /// Rebuilds every fetch index by scanning the live rows of its entity.
    private func rebuildFetchIndexes() {
        var indexes = StoreState.emptyFetchIndexes(schema)
        for entity in schema.entities where !entity.indexedColumns.isEmpty {
            var pairs: [Int: [(Value, PrimaryKey)]] = [:]
            do {
                try scan(entity.id) { key, row in
                    for column in entity.indexedColumns { pairs[column, default: []].append((row[column], key)) }
                }
            } catch {
                logger.critical("fetch indexes cannot be rebuilt", metadata: ["error": "\(error)"])
            }
            for (column, entries) in pairs { indexes[entity.id][column] = OrderedIndex(unsorted: entries) }
        }
        state.withLock { $0.fetchIndexes = indexes }
    }
}
