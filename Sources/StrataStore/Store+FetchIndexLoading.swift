import Foundation

extension Store {
    /// Keeps a checkpoint's fetch-index sections to be parsed when something first needs the
    /// indexes (``loadPendingFetchIndexes()``), so that opening a store reads no per-row state
    /// and starts no work that competes with the opening thread and its first reads for the cores.
    func deferFetchIndexes(_ sections: [FetchIndexSection]) {
        pendingFetchIndexes.withLock { $0 = sections }
        fetchIndexesPending.store(true, ordering: .releasing)
    }

    /// Parses the checkpoint's fetch indexes on the calling thread if they are still pending
    /// (at once when they are not): what commits, index queries, replay of indexed rows,
    /// checkpoints, compaction and statistics call first. A thread that calls it while another
    /// parses waits for that parse.
    ///
    /// Should the sections not parse (their checksums passed, so only a bug or a forged checksum
    /// could cause it), the indexes are rebuilt from the live rows.
    func loadPendingFetchIndexes() {
        guard fetchIndexesPending.load(ordering: .acquiring) else { return }
        pendingFetchIndexes.withLock { pending in
            guard let sections = pending else { return }
            defer {
                pending = nil
                fetchIndexesPending.store(false, ordering: .releasing)
            }
            if let decoded = try? Checkpoint.readFetchIndexes(sections, schema: schema) {
                state.withLock { $0.fetchIndexes = decoded }
                return
            }
            logger.error("checkpoint fetch indexes unreadable; rebuilding them from the rows", metadata: ["path": "\(path)"])
            rebuildFetchIndexes()
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
