import Foundation

/// How ``Store/rewriteLog(at:_:configuration:)`` converts the rows of a store to a new schema.
///
/// Every row keeps its primary key: a row of old entity `e` becomes a row of entity
/// `entities[e]` with the same key, so two old entities must not map to one new entity.
public struct LogRewrite: Sendable {
    /// The schema the store has after the rewrite.
    public var schema: Schema
    /// The new entity id of each old entity id; rows of an old entity not named here are dropped.
    public var entities: [Int: Int]
    /// Per old entity id, the new column of each old column (for the changed columns an update
    /// records in the history); an old column not named is dropped from them.
    public var columns: [Int: [Int: Int]]
    /// Converts a row image of an old entity (id, key, the row read under the old schema, every
    /// column present) to a row of its new entity under ``schema``. Called for every image the
    /// log holds: rows written, the prior images history keeps, and tombstones of records
    /// without prior images (the other tombstones are made from the converted prior image).
    /// `nil` drops the image's operation (with its prior image) from the record: the rows of
    /// objects whose entity the new schema no longer has.
    public var convert: @Sendable (_ entity: Int, _ key: Int64, _ row: Row) throws -> Row?
    /// Called after each segment is rewritten (before the commit), with how far the rewrite got.
    public var progress: (@Sendable (LogRewriteProgress) -> Void)?
    /// Per old entity whose rows go to several new entities (an entity moved out of its
    /// hierarchy), the new entity of the rows of each entity tag (the row's first column, an
    /// `.int`). An image without a tag (a tombstone or marker of a record without prior image)
    /// goes where an earlier image of its key went, else to ``entities``' entity, as an empty
    /// tombstone when it went elsewhere than its conversion's width says.
    public var routes: [Int: [Int64: Int]] = [:]
    /// Per old entity of ``routes`` and new entity, the new column of each old column, as ``columns``.
    public var routedColumns: [Int: [Int: [Int: Int]]] = [:]

    /// A rewrite to `schema` with the given entity and column correspondences and row conversion,
    /// reporting each segment rewritten to `progress`.
    public init(
        schema: Schema, entities: [Int: Int], columns: [Int: [Int: Int]],
        progress: (@Sendable (LogRewriteProgress) -> Void)? = nil,
        convert: @escaping @Sendable (_ entity: Int, _ key: Int64, _ row: Row) throws -> Row?
    ) {
        self.schema = schema
        self.entities = entities
        self.columns = columns
        self.progress = progress
        self.convert = convert
    }
}

/// How far a ``Store/rewriteLog(at:_:configuration:)`` got, reported after each segment
/// (``LogRewrite/progress``).
public struct LogRewriteProgress: Sendable, Hashable {
    /// The segments rewritten so far.
    public var segmentsDone: Int
    /// The segments of the log.
    public var segmentCount: Int
    /// What was read and written so far.
    public var report: LogRewriteReport
}

/// What ``Store/rewriteLog(at:_:configuration:)`` did.
public struct LogRewriteReport: Sendable, Hashable {
    /// Segments read.
    public var segmentsRead: Int
    /// Records rewritten (transactions and compaction records).
    public var records: Int
    /// Row images converted (current rows, tombstones and the prior images history keeps).
    public var rows: Int
    /// Bytes of the segment files read.
    public var bytesRead: Int64
    /// Bytes of the new segment files written.
    public var bytesWritten: Int64
}

extension Store {
    /// Rewrites the log of a store that no process has open under a new schema, segment by
    /// segment, as compaction copies it: every record (transactions with their history metadata,
    /// prior row images and cursors, and compaction records) is read, each row image is converted
    /// by `rewrite`, and the record is written again with the same sequence number into new
    /// segment files. Primary keys, sequence numbers, history, history consumers and the history
    /// floor are kept.
    ///
    /// Crash-safe: the new segments are written and synced beside the old ones, then one atomic
    /// replace of the manifest (new schema, new segment list, no checkpoint) commits the rewrite,
    /// then the old segments are deleted. A crash before the commit leaves the old store (the new
    /// files are removed as orphans when it is next opened), after it the new one. The next open
    /// rebuilds the index and fetch indexes by replaying the new log.
    ///
    /// Progress is logged at debug level, one line per segment, and reported to `rewrite.progress`.
    ///
    /// - Parameters:
    ///   - url: the store directory.
    ///   - rewrite: the new schema and how rows convert to it.
    ///   - configuration: the file system to use (its `io`), the segment and block sizes of the
    ///     new segments, and the logger.
    /// - Returns: what was read and written.
    /// - Throws: ``StoreError`` `locked` when a process has the store open, `corrupt` when a
    ///   record or row fails its checks, `unsupportedFormat`, `io`, `diskFull`; and whatever
    ///   `rewrite.convert` throws. The store is unchanged then.
    @discardableResult
    public static func rewriteLog(
        at url: URL, _ rewrite: LogRewrite, configuration: StoreConfiguration = StoreConfiguration()
    ) throws -> LogRewriteReport {
        var unlocked = configuration
        unlocked.readOnly = false
        let io = configuration.io
        let lockFD = try Recovery(path: url.path, schema: nil, configuration: unlocked).lock()
        defer {
            io.unlock(lockFD)
            io.close(lockFD)
        }
        let manifestPath = url.path + "/manifest"
        let segmentsPath = url.path + "/segments"
        let bytes = try StoreError.io("read manifest", path: manifestPath) { try io.readFile(manifestPath) }
        var manifest = try Manifest.decode(bytes, path: manifestPath)
        var writer = LogRewriter(
            rewrite: rewrite, oldCodecs: manifest.schemaHistory.codecs(for: manifest.schema),
            segmentsPath: segmentsPath,
            storeID: manifest.storeID, nextFileID: manifest.nextFileID, configuration: configuration)
        do {
            for (index, id) in manifest.segments.enumerated() {
                let file = try SegmentFile.open(
                    id: id, directory: segmentsPath, storeID: manifest.storeID, writable: false, io: io)
                try writer.rewriteSegment(file, isLast: index == manifest.segments.count - 1)
                rewrite.progress?(
                    LogRewriteProgress(
                        segmentsDone: index + 1, segmentCount: manifest.segments.count, report: writer.report))
                configuration.logger.debug(
                    "rewrote a segment of the log",
                    metadata: [
                        "path": "\(url.path)", "segment": "\(index + 1)", "of": "\(manifest.segments.count)",
                        "records": "\(writer.report.records)", "rows": "\(writer.report.rows)",
                    ])
            }
            try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
        let oldSegments = manifest.segments
        let oldCheckpoint = manifest.checkpoint
        var nextKeys = [Int64](repeating: 1, count: rewrite.schema.entities.count)
        for (old, new) in rewrite.entities where old < manifest.nextKeys.count && new < nextKeys.count {
            nextKeys[new] = max(nextKeys[new], manifest.nextKeys[old])
        }
        for (old, byTag) in rewrite.routes where old < manifest.nextKeys.count {
            for new in Set(byTag.values) where new < nextKeys.count {
                nextKeys[new] = max(nextKeys[new], manifest.nextKeys[old])
            }
        }
        manifest.schema = rewrite.schema
        manifest.schemaHistory = SchemaHistory()
        manifest.segments = writer.outputs.map(\.id)
        manifest.checkpoint = nil
        manifest.nextKeys = nextKeys
        manifest.nextFileID = writer.nextFileID
        do {
            try StoreError.io("write manifest", path: manifestPath) {
                try io.replaceAtomically(manifestPath, with: manifest.encode(), directory: url.path)
            }
        } catch {
            writer.discard()
            throw error
        }
        for id in oldSegments { try? io.unlink(segmentsPath + "/" + SegmentFile.fileName(id)) }
        if let oldCheckpoint { try? io.unlink(url.path + "/checkpoints/" + Checkpoint.fileName(oldCheckpoint)) }
        configuration.logger.debug(
            "rewrote the log under a new schema",
            metadata: [
                "path": "\(url.path)", "records": "\(writer.report.records)", "rows": "\(writer.report.rows)",
                "read": "\(writer.report.bytesRead)", "written": "\(writer.report.bytesWritten)",
            ])
        return writer.report
    }
}

extension Store {
    /// The file ids of the log of the store at `url`, from its manifest: the lowest id among its
    /// segments (`nil` when it has none) and the id its next segment file gets. Every segment a
    /// ``rewriteLog(at:_:configuration:)`` writes has an id at least the `next` read before it,
    /// so a rewrite committed exactly when `oldest` has reached that id, whatever the schema.
    ///
    /// - Throws: ``StoreError`` `unsupportedFormat` when the directory holds no store, `io`,
    ///   `corrupt` when the manifest does not decode.
    public static func logFileIDs(
        at url: URL, configuration: StoreConfiguration = StoreConfiguration()
    ) throws -> (oldest: UInt32?, next: UInt32) {
        let path = url.path + "/manifest"
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.unsupportedFormat, "the directory is not a Strata store (no manifest)", path: url.path)
        }
        let bytes = try StoreError.io("read manifest", path: path) { try configuration.io.readFile(path) }
        let manifest = try Manifest.decode(bytes, path: path)
        return (manifest.segments.min(), manifest.nextFileID)
    }
}

/// Reads a store's segments record by record and writes each record again with its rows
/// converted (``Store/rewriteLog(at:_:configuration:)``).
private struct LogRewriter {
    let rewrite: LogRewrite
    /// The old schema's codecs, by schema version then entity.
    let oldCodecs: [[RowCodec]]
    let newCodecs: [RowCodec]
    let segmentsPath: String
    let storeID: UUID
    let configuration: StoreConfiguration
    private(set) var nextFileID: UInt32
    private(set) var outputs: [SegmentFile] = []
    private var outputEnd: Int64 = 0
    private(set) var report = LogRewriteReport(segmentsRead: 0, records: 0, rows: 0, bytesRead: 0, bytesWritten: 0)
    /// Per old entity of ``LogRewrite/routes``, the new entity each key's images went to.
    private var routedKeys: [Int: [Int64: Int]] = [:]

    init(
        rewrite: LogRewrite, oldCodecs: [[RowCodec]], segmentsPath: String, storeID: UUID, nextFileID: UInt32,
        configuration: StoreConfiguration
    ) {
        self.rewrite = rewrite
        self.oldCodecs = oldCodecs
        newCodecs = rewrite.schema.entities.map { RowCodec($0) }
        self.segmentsPath = segmentsPath
        self.storeID = storeID
        self.nextFileID = nextFileID
        self.configuration = configuration
    }

    /// Rewrites every record of `file`. The last segment may end in zeros allocated ahead of the
    /// log or in a torn tail (a commit a crash cut short): the rewrite stops there.
    mutating func rewriteSegment(_ file: SegmentFile, isLast: Bool) throws {
        let size = try file.size()
        let bytes = try file.read(at: 0, count: Int(size))
        report.bytesRead += size
        report.segmentsRead += 1
        var position = SegmentFile.headerSize
        var newest: UInt64 = 0
        while position < bytes.count {
            let rest = bytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[position...]) }
            if isLast && Store.isZero(rest) { break }
            guard case .success(let record) = Store.parseRecord(in: rest) else {
                if isLast && Store.isTail(rest, after: newest) { break }
                throw StoreError(
                    .corrupt, "log record fails its checksum or does not parse", path: file.path,
                    offset: Int64(position))
            }
            try append(convert(record, in: bytes, at: position, file: file))
            newest = max(newest, record.sequence)
            position += record.length
        }
    }

    /// The record `record` (at `position` of the segment `bytes`) with its rows converted, sealed.
    private mutating func convert(
        _ record: ParsedRecord, in bytes: [UInt8], at position: Int, file: SegmentFile
    ) throws -> [UInt8] {
        var builder = RecordBuilder(kind: record.kind, blockSize: configuration.blockSize)
        var blocks: [Int: DecodedBlock] = [:]
        func decode(block: Int, slot: Int, entity: Int) throws -> Row {
            let decoded: DecodedBlock
            if let cached = blocks[block] {
                decoded = cached
            } else {
                decoded = try Store.decodeBlock(
                    record.blocks[block], in: bytes, recordStart: position, path: file.path,
                    recordOffset: Int64(position))
                blocks[block] = decoded
            }
            let offset = Int64(position + record.blocks[block].offset)
            guard slot < decoded.rowCount, Int(decoded.schemaVersion) < oldCodecs.count,
                entity < oldCodecs[Int(decoded.schemaVersion)].count
            else {
                throw StoreError(
                    .corrupt, "row \(slot) of a block is out of range or of an unknown schema version", path: file.path,
                    offset: offset)
            }
            let codec = oldCodecs[Int(decoded.schemaVersion)][entity]
            let old: Row
            do {
                old = try decoded.withRow(at: slot) { try codec.decode($0) }
            } catch {
                throw StoreError(.corrupt, "row \(slot) of a block does not decode", path: file.path, offset: offset)
            }
            report.rows += 1
            return old
        }
        for op in record.ops {
            guard var entity = rewrite.entities[op.entity] else { continue }
            let oldPrior =
                op.priorBlock >= 0 ? try decode(block: op.priorBlock, slot: op.priorSlot, entity: op.entity) : nil
            let oldImage =
                op.block >= 0 && !(op.kind == .delete && oldPrior != nil)
                ? try decode(block: op.block, slot: op.slot, entity: op.entity) : nil
            var untagged = false
            if let routes = rewrite.routes[op.entity] {
                if case .int(let tag)? = (oldPrior ?? oldImage)?[0], let routed = routes[tag] {
                    entity = routed
                    routedKeys[op.entity, default: [:]][op.key] = routed
                } else {
                    entity = routedKeys[op.entity]?[op.key] ?? entity
                    untagged = true
                }
            }
            let prior = try oldPrior.flatMap { try rewrite.convert(op.entity, op.key, $0) }
            // A prior image converted to nothing drops the operation: its object's entity is gone.
            if oldPrior != nil && prior == nil { continue }
            if op.block >= 0 {
                var image: Row
                if op.kind == .delete, let prior {
                    // A tombstone keeps the new schema's tombstone columns of the row deleted, as a commit makes it.
                    image = rewrite.schema.entities[entity].tombstone(of: prior, width: newCodecs[entity].types.count)
                } else {
                    guard let oldImage, let converted = try rewrite.convert(op.entity, op.key, oldImage) else {
                        continue
                    }
                    image = converted
                }
                if untagged && image.count != newCodecs[entity].types.count {
                    image = Row(Array(repeating: .null, count: newCodecs[entity].types.count))
                }
                let columns = rewrite.routedColumns[op.entity]?[entity] ?? rewrite.columns[op.entity]
                let changed = op.changedColumns.compactMap { columns?[$0] }
                builder.add(
                    op.kind, entity: entity, key: op.key, row: image, codec: newCodecs[entity], changedColumns: changed)
            } else {
                builder.addMarker(op.kind, entity: entity, key: op.key)
            }
            if let prior { builder.addPrior(prior, codec: newCodecs[entity]) }
        }
        var built = builder.build(
            timestamp: record.timestamp, author: record.author, contextName: record.contextName,
            bundleID: record.bundleID,
            processID: record.processID, cursors: record.cursors, threads: configuration.commitThreads)
        RecordHeader.seal(&built.bytes, sequence: record.sequence)
        report.records += 1
        return built.bytes
    }

    /// Appends a record to the newest output segment, starting a new one when it would pass the
    /// segment size.
    private mutating func append(_ bytes: [UInt8]) throws {
        if outputs.isEmpty
            || outputEnd + Int64(bytes.count) > Int64(configuration.segmentSize)
                && outputEnd > Int64(SegmentFile.headerSize)
        {
            try startSegment()
        }
        let output = outputs[outputs.count - 1]
        let offset = outputEnd
        try StoreError.io("write rewritten segment", path: output.path) {
            try bytes.withUnsafeBytes { try configuration.io.writeAll(output.fd, $0, at: offset) }
        }
        outputEnd += Int64(bytes.count)
        report.bytesWritten += Int64(bytes.count)
    }

    /// Syncs the last output and creates the next.
    private mutating func startSegment() throws {
        if let last = outputs.last {
            try StoreError.io("sync rewritten segment", path: last.path) { try configuration.io.fsync(last.fd) }
        }
        outputs.append(
            try SegmentFile.create(id: nextFileID, directory: segmentsPath, storeID: storeID, io: configuration.io))
        nextFileID += 1
        outputEnd = Int64(SegmentFile.headerSize)
        report.bytesWritten += Int64(SegmentFile.headerSize)
    }

    /// Syncs the outputs (creating one when the log was empty) and the segments directory.
    mutating func finish() throws {
        if outputs.isEmpty { try startSegment() }
        let last = outputs[outputs.count - 1]
        try StoreError.io("sync rewritten segment", path: last.path) { try configuration.io.fsync(last.fd) }
        try StoreError.io("sync segments directory", path: segmentsPath) {
            try configuration.io.syncDirectory(segmentsPath)
        }
    }

    /// Removes the outputs of a rewrite that did not commit.
    func discard() {
        for output in outputs { output.markObsolete() }
    }
}
