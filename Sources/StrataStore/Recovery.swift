import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a store directory: creates it, or reads its manifest, loads the newest checkpoint and
/// replays the log after it.
struct Recovery {
    /// The store directory.
    let path: String
    /// The schema the caller expects, if any.
    let schema: Schema?
    /// The configuration to open with.
    let configuration: StoreConfiguration
    /// Whether to replay the whole log instead of loading the checkpoint (after a page of its
    /// object index turned out damaged while the log after it was replayed).
    var ignoresCheckpoint = false

    private var io: any FileIO { configuration.io }
    private var logger: Logger { configuration.logger }

    /// Opens (or creates) the store.
    func open() throws -> Store {
        let started = ContinuousClock.now
        try configuration.validate()
        let exists = (try? io.contentsOfDirectory(path)) != nil
        if !exists {
            guard configuration.createIfMissing, !configuration.readOnly, schema != nil else {
                throw StoreError(.notFound, "no store at this path", path: path)
            }
            try StoreError.io("create store directory", path: path) {
                try io.makeDirectory(path)
                try io.makeDirectory(path + "/segments")
                try io.makeDirectory(path + "/checkpoints")
            }
        }
        let lockFD = try lock()
        var lockHandedOver = false
        do {
            let manifestPath = path + "/manifest"
            let manifest: Manifest
            let names = try StoreError.io("list store directory", path: path) { try io.contentsOfDirectory(path) }
            if names.contains("manifest") {
                let bytes = try StoreError.io("read manifest", path: manifestPath) { try io.readFile(manifestPath) }
                manifest = try Manifest.decode(bytes, path: manifestPath)
            } else if let schema, !configuration.readOnly,
                Set(names).isSubset(of: ["lock", "segments", "checkpoints", "manifest.tmp"])
            {
                manifest = try create(schema: schema)
            } else {
                throw StoreError(.unsupportedFormat, "the directory is not a Strata store (no manifest)", path: path)
            }
            if let schema, schema.hash != manifest.schema.hash {
                throw StoreError(
                    .schemaMismatch,
                    "the store was written with schema \(String(manifest.schema.hash, radix: 16)) "
                        + "(entities \(manifest.schema.entities.map(\.name))); the schema given is \(String(schema.hash, radix: 16))",
                    path: manifestPath)
            }
            let store: Store
            do {
                store = try openStore(manifest: manifest, lockFD: lockFD, lockHandedOver: &lockHandedOver)
            } catch let error as StoreError
                where lockHandedOver && !ignoresCheckpoint && error.path?.hasPrefix(path + "/checkpoints/") == true
            {
                // A page of the checkpoint's index, read as the log after it was replayed, is
                // damaged. The store that read it is released with its lock: open from the log alone.
                logger.warning("checkpoint unusable; replaying the whole log", metadata: ["error": "\(error)"])
                var recovery = self
                recovery.ignoresCheckpoint = true
                return try recovery.open()
            }
            logger.debug(
                "opened store",
                metadata: [
                    "path": "\(path)",
                    "rows": "\(store.state.withLock { $0.entities.reduce(0) { $0 + $1.liveCount } })",
                    "segments": "\(manifest.segments.count)", "duration": "\(ContinuousClock.now - started)",
                ])
            return store
        } catch {
            // Once a store holds the lock, releasing the store releases it; closing it here too
            // would close whatever file reused the descriptor number meanwhile.
            if lockFD >= 0 && !lockHandedOver {
                io.unlock(lockFD)
                io.close(lockFD)
            }
            throw error
        }
    }

    /// Takes the write lock, or returns -1 for a read-only open.
    func lock() throws -> Int32 {
        guard !configuration.readOnly else { return -1 }
        let lockPath = path + "/lock"
        let fd = try StoreError.io("open lock file", path: lockPath) {
            try io.open(lockPath, flags: O_RDWR | O_CREAT, mode: 0o644)
        }
        let locked: Bool
        do {
            locked = try StoreError.io("lock store", path: lockPath) { try io.lockExclusively(fd) }
        } catch {
            io.close(fd)
            throw error
        }
        guard locked else {
            io.close(fd)
            throw StoreError(
                .locked, "another process (or another open Store) has the store open for writing", path: lockPath)
        }
        return fd
    }

    /// Writes the first segment and manifest of a new store.
    private func create(schema: Schema) throws -> Manifest {
        try removeLeftoversOfCreation()
        let manifest = Manifest(
            storeID: UUID(), schema: schema, historyTracking: configuration.historyTracking, segments: [1],
            checkpoint: nil, historyFloor: 0, lastSequence: 0,
            nextKeys: Array(repeating: 1, count: schema.entities.count), nextFileID: 2)
        _ = try SegmentFile.create(id: 1, directory: path + "/segments", storeID: manifest.storeID, io: io)
        try StoreError.io("write manifest", path: path + "/manifest") {
            try io.replaceAtomically(path + "/manifest", with: manifest.encode(), directory: path)
        }
        logger.debug("created store", metadata: ["path": "\(path)"])
        return manifest
    }

    /// Makes the subdirectories and removes the first segment that a crash while creating the
    /// store can leave behind (no commit is ever written before the manifest exists), so that
    /// creating starts over; refuses a directory whose files hold more than that.
    private func removeLeftoversOfCreation() throws {
        let segments = path + "/segments"
        let first = SegmentFile.fileName(1)
        try StoreError.io("create store directory", path: path) {
            try io.makeDirectory(segments)
            try io.makeDirectory(path + "/checkpoints")
        }
        let names = try StoreError.io("list segments", path: segments) { try io.contentsOfDirectory(segments) }
        let checkpoints = try StoreError.io("list checkpoints", path: path + "/checkpoints") {
            try io.contentsOfDirectory(path + "/checkpoints")
        }
        var leftoverSize: Int64 = 0
        if names.contains(first) {
            leftoverSize = try StoreError.io("stat segment", path: segments + "/" + first) {
                let fd = try io.open(segments + "/" + first, flags: O_RDONLY, mode: 0)
                defer { io.close(fd) }
                return try io.size(fd)
            }
        }
        guard names.allSatisfy({ $0 == first }), checkpoints.isEmpty, leftoverSize <= Int64(SegmentFile.headerSize)
        else {
            throw StoreError(
                .unsupportedFormat, "the directory holds segments or checkpoints but no manifest", path: path)
        }
        if names.contains(first) {
            try StoreError.io("remove a segment left by an interrupted create", path: segments + "/" + first) {
                try io.unlink(segments + "/" + first)
            }
        }
    }

    /// Opens the segments, loads the checkpoint, replays the log and builds the store.
    private func openStore(manifest: Manifest, lockFD: Int32, lockHandedOver: inout Bool) throws -> Store {
        let segmentsPath = path + "/segments"
        var files = SegmentFiles()
        for id in manifest.segments {
            files[id] = try SegmentFile.open(
                id: id, directory: segmentsPath, storeID: manifest.storeID, writable: !configuration.readOnly, io: io)
        }
        let checkpoint = loadCheckpoint(manifest, files: files)
        var state = checkpoint?.state ?? StoreState(schema: manifest.schema)
        state.segmentOrder = manifest.segments
        state.files = files
        state.historyFloor = max(state.historyFloor, manifest.historyFloor)
        state.requestedHistoryFloor = manifest.requestedHistoryFloor
        state.consumers = manifest.consumers
        state.lastSequence = max(state.lastSequence, manifest.lastSequence)
        // Segments after the checkpoint's position: replay counts their bytes and sets their size.
        for id in manifest.segments where state.stats[id] == nil {
            state.stats[id] = SegmentStats()
        }
        var nextKeys = manifest.nextKeys
        for (entity, key) in (checkpoint?.nextKeys ?? []).enumerated() where entity < nextKeys.count {
            nextKeys[entity] = max(nextKeys[entity], key)
        }
        var status = ManifestStatus()
        status.checkpoint = checkpoint == nil ? nil : manifest.checkpoint
        status.nextFileID = manifest.nextFileID
        status.historyTracking = manifest.historyTracking
        var effective = configuration
        let startsTracking = historyTrackingSwitch(
            manifest, effective: &effective, lockFD: lockFD, lockHandedOver: &lockHandedOver)
        let store = Store(
            path: path, schema: schema ?? manifest.schema, storeID: manifest.storeID, configuration: effective,
            state: state, nextKeys: nextKeys, manifest: status, lockFD: effective.readOnly ? -1 : lockFD,
            schemaHistory: manifest.schemaHistory)
        lockHandedOver = true
        let start =
            checkpoint.map { (manifest.segments.firstIndex(of: $0.segment)!, $0.offset) }
            ?? (0, Int64(SegmentFile.headerSize))
        if let sections = checkpoint?.fetchIndexSections { store.deferFetchIndexes(sections) }
        try store.replay(from: start.0, offset: start.1)
        if startsTracking { try store.startHistoryTracking() }
        // Only once the manifest proved to match the segments: a wrong manifest must not delete them.
        if !effective.readOnly { removeOrphans(manifest) }
        try store.evictLaggingHistoryConsumers()
        if configuration.backgroundMaintenance && configuration.warmsCacheAfterOpening {
            store.warmBlockCacheInBackground()
        }
        if !effective.readOnly && configuration.backgroundMaintenance { store.startMaintenance() }
        return store
    }

    /// Loads the manifest's checkpoint, or returns `nil` (replaying the whole log) when it is
    /// missing, damaged or does not match the manifest's segments.
    private func loadCheckpoint(_ manifest: Manifest, files: SegmentFiles) -> Checkpoint? {
        guard !ignoresCheckpoint, let id = manifest.checkpoint else { return nil }
        let file = path + "/checkpoints/" + Checkpoint.fileName(id)
        do {
            var sizes: [UInt32: Int64] = [:]
            let checkpoint = try Checkpoint.open(path: file, schema: manifest.schema, io: io) { order in
                for id in order { sizes[id] = try files[id]?.size() }
                return sizes
            }
            guard let position = manifest.segments.firstIndex(of: checkpoint.segment),
                Array(manifest.segments[...position]) == checkpoint.state.segmentOrder
            else {
                throw StoreError(.corrupt, "checkpoint does not match the manifest's segments", path: file)
            }
            try checkpoint.checkPlaces(segmentSizes: sizes, path: file)
            return checkpoint
        } catch {
            logger.warning("checkpoint unusable; replaying the whole log", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Deletes segment and checkpoint files the manifest does not name (left by a crash).
    private func removeOrphans(_ manifest: Manifest) {
        let live = Set(manifest.segments)
        for name in (try? io.contentsOfDirectory(path + "/segments")) ?? [] {
            if let id = SegmentFile.id(fromFileName: name), live.contains(id) { continue }
            try? io.unlink(path + "/segments/" + name)
            logger.info("removed orphan file", metadata: ["file": "segments/\(name)"])
        }
        for name in (try? io.contentsOfDirectory(path + "/checkpoints")) ?? [] {
            if let id = Checkpoint.id(fromFileName: name), id == manifest.checkpoint { continue }
            try? io.unlink(path + "/checkpoints/" + name)
        }
        try? io.unlink(path + "/manifest.tmp")
    }
}
