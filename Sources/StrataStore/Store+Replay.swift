import Foundation

extension Store {
    /// Replays the log from `offset` of the segment at `segmentIndex` in log order to the end,
    /// truncating a torn tail of the active segment.
    func replay(from segmentIndex: Int, offset: Int64) throws {
        let order = state.withLock { $0.segmentOrder }
        var highestKeys = [Int64](repeating: 0, count: schema.entities.count)
        var replayed: Int64 = 0
        var end = offset
        for position in segmentIndex..<order.count {
            let id = order[position]
            let file = state.withLock { $0.files[id]! }
            let start = position == segmentIndex ? offset : Int64(SegmentFile.headerSize)
            end = try replaySegment(file, from: start, isActive: position == order.count - 1, highestKeys: &highestKeys)
            replayed += end - start
            state.withLock { $0.stats[id]?.fileBytes = end }
        }
        state.withLock { state in
            state.activeEnd = end
            state.stats[state.activeSegment]?.fileBytes = end
            state.history.sort { $0.sequence < $1.sequence }
            state.history.removeFirst(state.history.partitioningIndex { $0.sequence > state.historyFloor })
            state.bytesSinceCheckpoint = replayed
        }
        nextKeys.withLock { keys in
            for (entity, key) in highestKeys.enumerated() where key >= keys[entity] { keys[entity] = key + 1 }
        }
        if replayed > 0 {
            logger.debug("replayed log", metadata: ["bytes": "\(replayed)", "path": "\(path)"])
        }
    }

    /// Replays one segment from `start`; returns where its valid log ends.
    private func replaySegment(
        _ file: SegmentFile, from start: Int64, isActive: Bool, highestKeys: inout [Int64]
    ) throws -> Int64 {
        let size = try file.size()
        guard size > start else {
            guard size == start || isActive else {
                throw StoreError(
                    .corrupt, "segment is shorter than the log position recorded for it", path: file.path, offset: size)
            }
            return min(size, start)
        }
        let bytes = try file.read(at: start, count: Int(size - start))
        var position = 0
        var newest: UInt64 = 0
        while position < bytes.count {
            let outcome = bytes.withUnsafeBytes { raw -> Result<ParsedRecord, BinaryReader.Malformed> in
                let rest = UnsafeRawBufferPointer(rebasing: raw[position...])
                return Self.parseRecord(in: rest)
            }
            switch outcome {
            case .success(let record):
                try replayRecord(
                    record, bytes: bytes, at: position, file: file, recordOffset: start + Int64(position),
                    highestKeys: &highestKeys)
                position += record.length
                newest = max(newest, record.sequence)
            case .failure(let error):
                let offset = start + Int64(position)
                if isActive && bytes.withUnsafeBytes({ Self.isZero(UnsafeRawBufferPointer(rebasing: $0[position...])) })
                {
                    state.withLock { $0.preallocatedEnd = size }
                    return offset
                }
                let isTail =
                    isActive
                    && bytes.withUnsafeBytes {
                        Self.isTail(UnsafeRawBufferPointer(rebasing: $0[position...]), after: newest)
                    }
                guard isTail else {
                    throw StoreError(
                        .corrupt, "log record fails its checksum or does not parse", path: file.path,
                        offset: offset + Int64(error.offset))
                }
                try truncateTornTail(file, at: offset, size: size)
                return offset
            }
        }
        return size
    }

    /// Parses the record at the start of `bytes`.
    static func parseRecord(in bytes: UnsafeRawBufferPointer) -> Result<ParsedRecord, BinaryReader.Malformed> {
        guard bytes.count >= RecordHeader.size else { return .failure(BinaryReader.Malformed(offset: 0)) }
        let length = ParsedRecord.declaredLength(bytes)
        guard length >= RecordHeader.size, length <= bytes.count, length <= RecordHeader.maxLength else {
            return .failure(BinaryReader.Malformed(offset: 0))
        }
        do {
            return .success(try ParsedRecord(UnsafeRawBufferPointer(rebasing: bytes[..<length])))
        } catch let error as BinaryReader.Malformed {
            return .failure(error)
        } catch {
            return .failure(BinaryReader.Malformed(offset: 0))
        }
    }

    /// Whether every byte is zero: space allocated ahead of the log, never written.
    static func isZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var words = bytes.count / 8
        var index = 0
        while words > 0 {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
            words -= 1
        }
        return bytes[index...].allSatisfy { $0 == 0 }
    }

    /// Whether a bad record at the start of `bytes` is a torn tail: no valid record newer than
    /// `sequence` follows it, where its length field points or at any later offset (the length
    /// field may be the damaged byte; a crash leaves a prefix of what was written, never a hole).
    static func isTail(_ bytes: UnsafeRawBufferPointer, after sequence: UInt64 = 0) -> Bool {
        guard bytes.count >= RecordHeader.size else { return true }
        func isRecord(at offset: Int) -> Bool {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            guard rest.count >= RecordHeader.size, RecordKind(rawValue: rest[8]) != nil else { return false }
            // A cheap filter before the checksum: a later record continues the sequence.
            let next = UInt64(
                littleEndian: rest.loadUnaligned(fromByteOffset: RecordHeader.sequenceOffset, as: UInt64.self))
            guard next > sequence, next - sequence <= UInt64(UInt32.max), case .success = parseRecord(in: rest) else {
                return false
            }
            return true
        }
        let length = ParsedRecord.declaredLength(bytes)
        if length >= RecordHeader.size, length < bytes.count, isRecord(at: length) { return false }
        // A record's kind byte is not zero, so none starts in the zeros allocated ahead of the log.
        var end = bytes.count
        while end >= 8 && bytes.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == 0 { end -= 8 }
        let last = min(bytes.count - RecordHeader.size, end - 9)
        guard last >= 1 else { return true }
        for offset in 1...last where isRecord(at: offset) { return false }
        return true
    }

    private func truncateTornTail(_ file: SegmentFile, at offset: Int64, size: Int64) throws {
        logger.warning(
            "truncating torn tail of the log",
            metadata: [
                "file": "\(file.path)", "offset": "\(offset)", "bytes": "\(size - offset)",
            ])
        guard !configuration.readOnly else { return }
        try StoreError.io("truncate torn tail", path: file.path) {
            try io.ftruncate(file.fd, to: offset)
            try io.fsync(file.fd)
        }
    }

    /// Checks that every operation of `record` (read at `offset` of the file at `path`) names an
    /// entity of the schema and a key from 1 to ``EntityIndex/maximumKey``: the record's checksum
    /// passed, but the index, compaction and history take both as they are.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the file and the record's offset.
    func checkOperations(of record: ParsedRecord, path: String, offset: Int64) throws {
        for op in record.ops {
            guard op.entity < schema.entities.count else {
                throw StoreError(
                    .corrupt, "log record operates on entity \(op.entity), which the schema does not have",
                    path: path, offset: offset)
            }
            guard op.key > 0, op.key <= EntityIndex.maximumKey else {
                throw StoreError(
                    .corrupt,
                    "log record operates on key \(op.key) of \(schema.entities[op.entity].name); "
                        + "keys are from 1 to 2^62",
                    path: path, offset: offset)
            }
        }
    }

    /// Applies one replayed record, decoding the row images its fetch-index updates need.
    func replayRecord(
        _ record: ParsedRecord, bytes: [UInt8], at position: Int, file: SegmentFile, recordOffset: Int64,
        highestKeys: inout [Int64]
    ) throws {
        try checkOperations(of: record, path: file.path, offset: recordOffset)
        // Reads the keys' pages of a checkpoint's index not yet read, so that applying the record
        // sets them without I/O (a damaged page fails the open, which then replays the whole log).
        try state.withLock { state in
            for op in record.ops { try state.entities[op.entity].prepare(op.key) }
        }
        var blocks: [Int: DecodedBlock] = [:]
        var latest: [EntityKey: Row?] = [:]
        for op in record.ops {
            highestKeys[op.entity] = max(highestKeys[op.entity], op.key)
            let columns = schema.entities[op.entity].indexedColumns
            guard !columns.isEmpty else { continue }
            loadPendingFetchIndexes()
            // Every update is diffed, even one whose changed columns hold no indexed one: once
            // compaction has dropped a key's earlier versions, the version before it in the log is
            // not the one it was written over, or there is none.
            var new: Row?
            if !op.kind.removes {
                let span = record.blocks[op.block]
                let block: DecodedBlock
                if let decoded = blocks[op.block] {
                    block = decoded
                } else {
                    block = try Self.decodeBlock(
                        span, in: bytes, recordStart: position, path: file.path, recordOffset: recordOffset)
                    blocks[op.block] = block
                }
                new = try decodeRow(
                    block, slot: op.slot, entity: op.entity, file: file, offset: recordOffset + Int64(span.offset))
            }
            let id = EntityKey(entity: op.entity, key: op.key)
            let old = op.kind == .insert ? nil : try latest[id] ?? read(op.entity, key: op.key)
            latest[id] = new
            state.withLock { $0.updateFetchIndexes(op.entity, op.key, old: old, new: new) }
        }
        let summary = RecordSummary(
            kind: record.kind, sequence: record.sequence, length: record.length, ops: record.ops, blocks: record.blocks,
            cursors: record.cursors)
        state.withLock { state in
            state.apply(summary, segment: file.id, offset: recordOffset, historyTracking: configuration.historyTracking)
        }
    }
}
