import Foundation

extension Store {
    /// Parses a checkpoint's fetch indexes on a background thread, so that opening returns as
    /// soon as the object index is loaded. Anything that needs the fetch indexes (commits,
    /// index lookups, replay of indexed rows, checkpoints, compaction) waits for them.
    ///
    /// Should the sections not parse (their checksums passed, so only a bug could cause it), the
    /// indexes are rebuilt from the live rows instead.
    func loadFetchIndexesInBackground(_ sections: [FetchIndexSection]) {
        let group = fetchIndexLoading
        let schema = schema
        group.enter()
        let state = state
        // Holds the state, not the store, so that dropping the store (as a crash does) releases
        // its files and lock at once.
        let thread = Thread { [weak self] in
            defer { group.leave() }
            if let decoded = try? Checkpoint.readFetchIndexes(sections, schema: schema) {
                state.withLock { $0.fetchIndexes = decoded }
            } else if let store = self {
                store.logger.error(
                    "checkpoint fetch indexes unreadable; rebuilding them from the rows",
                    metadata: ["path": "\(store.path)"])
                store.rebuildFetchIndexes()
            }
        }
        thread.name = "strata-fetch-index-load"
        thread.start()
    }

    /// Waits until the fetch indexes are loaded (at once when they are).
    func waitForFetchIndexes() {
        fetchIndexLoading.wait()
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
