import Foundation

/// One row a replayed transaction changed, as ``Store/replayHistory(from:after:progress:aroundEachBatch:)``
/// reports its batches: enough to record what pinned readers need before the batch commits.
/// `Sendable`.
public struct ReplayedChange: Sendable, Hashable {
    /// Insert, update or delete.
    public var kind: ChangeKind
    /// The entity of the row.
    public var entity: Int
    /// The key of the row.
    public var key: PrimaryKey

    /// Creates the change of `kind` to the row of `entity` at `key`.
    public init(kind: ChangeKind, entity: Int, key: PrimaryKey) {
        self.kind = kind
        self.entity = entity
        self.key = key
    }
}

/// A row image still encoded in a decoded block: of a source history record, or of the
/// destination's committed log.
struct ReplayImage {
    /// The block holding the row.
    var block: DecodedBlock
    /// The row's slot in the block.
    var slot: Int
    /// Whether the block is the source's (else the destination's).
    var fromSource: Bool
}

extension ReplayImage {
    /// Whether `other` holds the same encoded row bytes.
    func sameBytes(as other: ReplayImage) -> Bool {
        block.withRow(at: slot) { mine in
            other.block.withRow(at: other.slot) { theirs in
                mine.count == theirs.count
                    && (mine.isEmpty || memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0)
            }
        }
    }
}

/// The row images a replay wrote that this store may not hold yet, by key (`nil` once deleted):
/// those of the batch being built, and those of the batch being committed meanwhile
/// (``ReplayCommitPipeline``). The prior row of a later change of the same key is taken from
/// here before the store.
struct ReplayWrites {
    /// The images of the batch being built.
    private var building: [EntityKey: ReplayImage?] = [:]
    /// The images of the batch being committed, which the store may not have applied yet.
    private var committing: [EntityKey: ReplayImage?] = [:]

    /// Room for `count` images a batch.
    init(reservingCapacity count: Int) {
        building.reserveCapacity(count)
    }

    /// The newest image the replay wrote for `id` (`.some(nil)`: deleted), or `nil` when it
    /// wrote none that the store may lack.
    subscript(id: EntityKey) -> ReplayImage?? {
        building[id] ?? committing[id]
    }

    /// Records `image` (`nil`: deleted) as the batch being built's image of `id`.
    mutating func record(_ image: ReplayImage?, for id: EntityKey) {
        building.updateValue(image, forKey: id)
    }

    /// The batch built is being committed while the next is built; the one before has committed.
    mutating func batchStarted() {
        swap(&building, &committing)
        building.removeAll(keepingCapacity: true)
    }

    /// Every batch built is committed: the store holds every image.
    mutating func batchesCommitted() {
        building.removeAll(keepingCapacity: true)
        committing.removeAll(keepingCapacity: true)
    }
}

/// What replaying one store's history into another needs to re-encode source records: the
/// source, the destination's cursor name, and which schema versions of each store encode an
/// entity's rows in the current layout (their bytes are copied as they are).
struct ReplayEncoding {
    /// The store whose history is replayed.
    let source: Store
    /// The destination's history consumer holding the replay cursor.
    let cursor: String
    /// By schema version then entity: whether the source's rows of that version are in the current layout.
    let sourceCurrent: [[Bool]]
    /// The same for the destination's committed rows.
    let destinationCurrent: [[Bool]]
    /// By entity: whether each column has a fetch index (an update that changes none of them
    /// leaves the fetch indexes as they are).
    let fetchIndexed: [[Bool]]

    /// Prepares to replay `source` into `destination` (of the same schema) under `cursor`.
    init(source: Store, into destination: Store, cursor: String) {
        self.source = source
        self.cursor = cursor
        func current(_ store: Store) -> [[Bool]] {
            store.versionCodecs.map { codecs in codecs.map(\.storesEveryColumn) }
        }
        sourceCurrent = current(source)
        destinationCurrent = current(destination)
        fetchIndexed = destination.schema.entities.map { $0.columns.map(\.hasFetchIndex) }
    }

    /// Whether the blocks of the source history record `record` (its bytes from `start` of
    /// `bytes`) can be copied whole into this store's record: each holds rows of an entity
    /// that both stores encode in the current layout under the block's schema version.
    func sharesBlocks(of record: ParsedRecord, in bytes: [UInt8], start: Int) -> Bool {
        record.blocks.allSatisfy { span in
            // The block header's schema version byte (``BlockBuilder``'s on-disk layout).
            let version = Int(bytes[start + span.offset + 13])
            return version < sourceCurrent.count && version < destinationCurrent.count
                && span.entity < sourceCurrent[version].count && span.entity < destinationCurrent[version].count
                && sourceCurrent[version][span.entity] && destinationCurrent[version][span.entity]
        }
    }

    /// Whether `image`'s bytes are a row of `entity` in the current layout.
    func isCurrent(_ image: ReplayImage, entity: Int) -> Bool {
        let versions = image.fromSource ? sourceCurrent : destinationCurrent
        let version = Int(image.block.schemaVersion)
        return version < versions.count && entity < versions[version].count && versions[version][entity]
    }
}

extension Store {
    /// Re-encodes a source history record (parsed, its bytes from `start` of `bytes`, at
    /// `entry` of `file`) as a commit of this store waiting to be written: the source's row
    /// images copied as they are when both stores encode them alike (else decoded and encoded
    /// again), the prior rows and tombstones taken from what this store holds (the rows the
    /// batch wrote before, in `written`, else the committed ones, read block by block), the
    /// replay cursor set to the record's sequence. No `Transaction` or `Row` is built, except
    /// the rows the fetch indexes and tombstones need.
    ///
    /// - Parameters:
    ///   - written: the images the replay wrote that the store may not hold yet; the record's
    ///     are added.
    ///   - changes: the record's changes are appended.
    ///   - readSequence: the sequence the store will be at once the batch being committed
    ///     meanwhile, if any, has committed: the prior rows read here are its rows then.
    /// - Throws: ``StoreError`` `corrupt` for a record that does not decode or names what the
    ///   schema does not have; `keyConflict` for a delete of a missing row whose tombstone is kept.
    func replayCommit(
        of record: ParsedRecord, bytes: [UInt8], start: Int, entry: HistoryEntry, file: SegmentFile,
        encoding: ReplayEncoding,
        written: inout ReplayWrites, changes: inout [ReplayedChange], readSequence: UInt64, durable: Bool
    ) throws -> PendingCommit {
        let offset = entry.offset
        var sourceBlocks = [DecodedBlock?](repeating: nil, count: record.blocks.count)
        func sourceImage(_ block: Int, _ slot: Int) throws -> ReplayImage {
            guard block >= 0, block < sourceBlocks.count else {
                throw StoreError(.corrupt, "a replayed change has no row image", path: file.path, offset: offset)
            }
            let decoded: DecodedBlock
            if let cached = sourceBlocks[block] {
                decoded = cached
            } else {
                // The source's cache holds the blocks its recent commits wrote, decoded.
                decoded =
                    try entry.firstBlock.flatMap { encoding.source.cachedBlock($0 + UInt32(block)) }
                    ?? Self.decodeBlock(
                        record.blocks[block], in: bytes, recordStart: start, path: file.path, recordOffset: offset)
                sourceBlocks[block] = decoded
            }
            guard slot < decoded.rowCount else {
                throw StoreError(
                    .corrupt, "row slot \(slot) is past the block's rows", path: file.path,
                    offset: offset + Int64(record.blocks[block].offset))
            }
            return ReplayImage(block: decoded, slot: slot, fromSource: true)
        }
        /// Decodes the row of `image` with `decode`, given the codec of the image's schema version.
        func decoding<T>(
            _ image: ReplayImage, _ entity: Int, _ decode: (RowCodec, UnsafeRawBufferPointer) throws -> T
        ) throws -> T {
            do {
                let codec = try (image.fromSource ? encoding.source : self).codec(entity, of: image.block)
                return try image.block.withRow(at: image.slot) { try decode(codec, $0) }
            } catch {
                throw StoreError(.corrupt, "a replayed row does not decode", path: file.path, offset: offset)
            }
        }
        /// The row of `image`.
        func decode(_ image: ReplayImage, _ entity: Int) throws -> Row {
            try decoding(image, entity) { codec, bytes in try codec.decode(bytes) }
        }
        /// The values of the fetch-indexed columns of the row of `image`.
        func indexedValues(_ image: ReplayImage, _ entity: Int) throws -> IndexedValues {
            try decoding(image, entity) { codec, bytes in
                try codec.decodeIndexed(bytes, columns: schema.entities[entity].indexedColumns)
            }
        }
        // Operations are read by position: a copy of one would retain its changed columns.
        let ops = record.ops
        for index in ops.indices {
            let (entity, key, kind) = (ops[index].entity, ops[index].key, ops[index].kind)
            guard schema.entities.indices.contains(entity), key > 0, !(kind == .put || kind == .erase) else {
                throw StoreError(
                    .corrupt, "a history record names an operation the schema does not have", path: file.path,
                    offset: offset)
            }
        }
        let committed = try replayCommittedPriors(of: ops, written: written)
        // The record's blocks are copied whole when this store reads them as the source does and
        // every prior row the source kept is byte for byte the one this store holds.
        var reusesBlocks = encoding.sharesBlocks(of: record, in: bytes, start: start)
        var rows: [IndexedRowChange] = []
        rows.reserveCapacity(ops.count)
        var highestKeys = [Int64](repeating: 0, count: schema.entities.count)
        // Each operation's row before it, in this store.
        var befores = [ReplayImage?](repeating: nil, count: ops.count)
        for index in ops.indices {
            let op = ops[index]
            let id = EntityKey(entity: op.entity, key: op.key)
            let indexed = !schema.entities[op.entity].indexedColumns.isEmpty
            let before: ReplayImage? = if let image = written[id] { image } else { committed[index] }
            befores[index] = before
            if reusesBlocks && op.kind != .insert {
                // The same bytes in the same (current) layout: the same row.
                if let before, op.priorBlock >= 0 {
                    reusesBlocks =
                        try encoding.isCurrent(before, entity: op.entity)
                        && sourceImage(op.priorBlock, op.priorSlot).sameBytes(as: before)
                } else {
                    reusesBlocks = false
                }
            }
            switch op.kind {
            case .insert:
                if indexed {
                    rows.append(
                        IndexedRowChange(
                            op: index, old: nil, new: try indexedValues(try sourceImage(op.block, op.slot), op.entity)))
                }
                highestKeys[op.entity] = max(highestKeys[op.entity], op.key)
                written.record(try sourceImage(op.block, op.slot), for: id)
                changes.append(ReplayedChange(kind: .insert, entity: op.entity, key: op.key))
            case .update:
                guard op.changedColumns.allSatisfy({ encoding.fetchIndexed[op.entity].indices.contains($0) }) else {
                    throw StoreError(
                        .corrupt, "a history record names columns \(op.changedColumns) the schema does not have",
                        path: file.path, offset: offset)
                }
                let image = try sourceImage(op.block, op.slot)
                if indexed && op.changedColumns.contains(where: { encoding.fetchIndexed[op.entity][$0] }) {
                    rows.append(
                        IndexedRowChange(
                            op: index, old: try before.map { try indexedValues($0, op.entity) },
                            new: try indexedValues(image, op.entity)))
                }
                written.record(image, for: id)
                changes.append(ReplayedChange(kind: .update, entity: op.entity, key: op.key))
            case .delete:
                if before == nil && !schema.entities[op.entity].tombstoneColumns.isEmpty {
                    throw StoreError(
                        .keyConflict, "delete of \(schema.entities[op.entity].name) \(op.key), which does not exist")
                }
                if indexed {
                    rows.append(
                        IndexedRowChange(op: index, old: try before.map { try indexedValues($0, op.entity) }, new: nil))
                }
                written.record(nil, for: id)
                changes.append(ReplayedChange(kind: .delete, entity: op.entity, key: op.key))
            case .put, .erase:
                break
            }
        }
        raiseNextKeys(highestKeys)
        let cursors = [encoding.cursor: record.sequence]
        var encoded: EncodedRecord
        if reusesBlocks {
            encoded = RecordBuilder.encode(
                kind: .transaction, ops: ops, blockBytes: record.blocks.reduce(0) { $0 + $1.length },
                timestamp: record.timestamp,
                author: record.author, contextName: record.contextName, bundleID: record.bundleID,
                processID: record.processID,
                cursors: cursors
            ) { output in
                record.blocks.map { span in
                    let blockStart = output.count
                    output.append(contentsOf: bytes[(start + span.offset)..<(start + span.offset + span.length)])
                    return BlockSpan(offset: blockStart, length: span.length, entity: span.entity)
                }
            }
            // The same bytes: the source's blocks as the replay decoded them are this record's.
            encoded.decodedBlocks = sourceBlocks
        } else {
            var builder = RecordBuilder(
                kind: .transaction, blockSize: configuration.blockSize, schemaVersion: UInt8(schemaHistory.version))
            for (op, before) in zip(ops, befores) {
                func add(_ kind: OpKind, _ image: ReplayImage, changed: [Int] = []) throws {
                    if encoding.isCurrent(image, entity: op.entity) {
                        image.block.withRow(at: image.slot) {
                            builder.add(kind, entity: op.entity, key: op.key, encodedRow: $0, changedColumns: changed)
                        }
                    } else {
                        builder.add(
                            kind, entity: op.entity, key: op.key, row: try decode(image, op.entity),
                            codec: codecs[op.entity], changedColumns: changed)
                    }
                }
                switch op.kind {
                case .insert: try add(.insert, try sourceImage(op.block, op.slot))
                case .update: try add(.update, try sourceImage(op.block, op.slot), changed: op.changedColumns)
                case .delete:
                    if let before, !schema.entities[op.entity].tombstoneColumns.isEmpty {
                        let tombstone = schema.entities[op.entity].tombstone(
                            of: try decode(before, op.entity), width: codecs[op.entity].types.count)
                        builder.add(.delete, entity: op.entity, key: op.key, row: tombstone, codec: codecs[op.entity])
                    } else {
                        builder.addMarker(.delete, entity: op.entity, key: op.key)
                    }
                case .put, .erase: continue
                }
                guard op.kind != .insert, let before else { continue }
                if encoding.isCurrent(before, entity: op.entity) {
                    before.block.withRow(at: before.slot) { builder.addPrior(encodedRow: $0) }
                } else {
                    builder.addPrior(try decode(before, op.entity), codec: codecs[op.entity])
                }
            }
            encoded = builder.build(
                timestamp: record.timestamp, author: record.author, contextName: record.contextName,
                bundleID: record.bundleID, processID: record.processID, cursors: cursors, decodedBudget: cache.freeRoom,
                threads: configuration.commitThreads)
        }
        try encoded.checkSize()
        return PendingCommit(
            record: encoded, rows: rows, readSequence: readSequence, durable: durable, condition: nil,
            ticket: CommitTicket())
    }

    /// The committed images of the keys that the updates and deletes of `ops` change and that
    /// `written` does not hold, by operation position, read block by block.
    private func replayCommittedPriors(of ops: [RecordOp], written: ReplayWrites) throws -> [ReplayImage?] {
        var images = [ReplayImage?](repeating: nil, count: ops.count)
        var positions: [Int: [Int]] = [:]
        for position in ops.indices where ops[position].kind != .insert {
            let id = EntityKey(entity: ops[position].entity, key: ops[position].key)
            if written[id] == nil { positions[id.entity, default: []].append(position) }
        }
        for (entity, entityPositions) in positions {
            try forEachLiveSlot(entity, keys: entityPositions.map { ops[$0].key }) { block, slots, _, _ in
                for (position, slot) in slots {
                    images[entityPositions[position]] = ReplayImage(block: block, slot: slot, fromSource: false)
                }
            }
        }
        return images
    }
}
