import Foundation

/// What a compaction did. `Sendable`.
public struct CompactionReport: Sendable, Hashable, Codable {
    /// Segments rewritten.
    public var segmentsCompacted: Int
    /// Bytes of the segment files rewritten.
    public var bytesRead: Int64
    /// Bytes written to new segments.
    public var bytesWritten: Int64
    /// Bytes of all live segment files before.
    public var bytesBefore: Int64
    /// Bytes of all live segment files after.
    public var bytesAfter: Int64
}

/// A live row copied to a new segment in a compaction record, to install if the index still
/// points at its old place. Narrow fields: a large compaction moves millions.
private struct MovedRow {
    var key: Int64
    var old: RowLocation
    /// The compaction record it went to (an index of the written records).
    var record: Int32
    /// Where the row starts among its block's row data.
    var start: Int32
    var size: UInt32
    var entity: UInt16
    /// The block within the record.
    var block: UInt16
    var slot: UInt16
}

/// A row of a transaction record a compaction copied whole, to install if the index still
/// points at its place in the old record.
private struct CopiedRow {
    var key: Int64
    /// The written record (an index of the written records).
    var record: Int32
    var size: UInt32
    var entity: UInt16
    /// The block within the record.
    var block: UInt16
    var slot: UInt16
}

/// A record written to a compaction output: its place and what installing it needs. Its blocks'
/// places are a range of a list shared by the compaction's records, and its rows are in the
/// compaction's ``MovedRow`` or ``CopiedRow`` lists, so that a record holds no array of its own:
/// a compaction copying a million small transactions forward held a few hundred megabytes of
/// their parsed operations until it switched over.
private struct WrittenRecord {
    var output: Int
    var offset: Int64
    var sequence: UInt64
    /// The encoded sizes of its rows, which count as dead bytes of the output once later
    /// records replace them.
    var rowBytes: Int64
    /// Its blocks' places, in the compaction's list of them.
    var spans: Range<Int>
    /// For a transaction copied whole: its old segment and offset.
    var copiedFrom: (segment: UInt32, offset: Int64)?
}

/// What a compaction wrote, for its switch-over: its records in order, their blocks' places and
/// their rows to install.
private struct WrittenRecords {
    var records: [WrittenRecord]
    var spans: [BlockSpan]
    var moved: [MovedRow]
    var copied: [CopiedRow]
}

extension Store {
    /// Compacts now: seals the active segment if it holds dead rows, then rewrites every sealed
    /// segment that holds dead rows, copying live rows and retained history forward.
    ///
    /// Commits and reads go on meanwhile. Old files are deleted when no reader uses them.
    /// Costs a read of the rewritten segments and a write of what is live in them.
    ///
    /// - Returns: what was rewritten and the bytes on disk before and after.
    /// - Throws: ``StoreError`` `corrupt` (a sealed segment fails its checksums; nothing changes),
    ///   `io`, `diskFull`.
    @discardableResult
    public func compact() throws -> CompactionReport {
        try checkOpen(writing: true)
        let activeHasDead = state.withLock { ($0.stats[$0.activeSegment]?.deadBytes ?? 0) > 0 }
        if activeHasDead { try appendLock.withLock { _ in try rollSegment() } }
        return try compactSegments(onDemand: true)
    }

    /// Compacts the sealed segments that qualify: on demand, those with dead bytes; in the
    /// background, those past the dead-fraction threshold whose history is no longer retained.
    @discardableResult
    func compactSegments(onDemand: Bool) throws -> CompactionReport {
        try evictLaggingHistoryConsumers()
        return try compactionLock.withLock { _ in
            let (order, stats, floor) = state.withLock { ($0.segmentOrder, $0.stats, $0.historyFloor) }
            let before = order.reduce(Int64(0)) { $0 + (stats[$1]?.fileBytes ?? 0) }
            var report = CompactionReport(
                segmentsCompacted: 0, bytesRead: 0, bytesWritten: 0, bytesBefore: before, bytesAfter: before)
            let tracking = configuration.historyTracking
            let selected = order.dropLast().map { id -> Bool in
                let segment = stats[id] ?? SegmentStats()
                if onDemand { return segment.deadBytes > 0 }
                return segment.deadFraction >= configuration.compactionThreshold
                    && (!tracking || segment.maxSequence <= floor)
            }
            var runs: [[UInt32]] = []
            var current: [UInt32] = []
            for (index, isSelected) in selected.enumerated() {
                if isSelected {
                    current.append(order[index])
                } else if !current.isEmpty {
                    runs.append(current)
                    current = []
                }
            }
            if !current.isEmpty { runs.append(current) }
            if let first = runs.first {
                runs[0] = extendedToTheLogStart(
                    first, order: order, stats: stats, retainedAfter: floor, onDemand: onDemand)
            }
            // A run's checkpoint holds the fetch indexes: they are parsed only when there is one,
            // so a maintenance round that finds nothing to compact leaves them pending.
            if !runs.isEmpty { loadPendingFetchIndexes() }
            for run in runs {
                let (read, written) = try compactRun(run)
                report.segmentsCompacted += run.count
                report.bytesRead += read
                report.bytesWritten += written
            }
            report.bytesAfter = state.withLock { state in
                state.segmentOrder.reduce(Int64(0)) { $0 + (state.stats[$1]?.fileBytes ?? 0) }
            }
            if report.segmentsCompacted > 0 {
                counters.compactions.add(1)
                counters.bytesReclaimed.add(Int(max(0, report.bytesBefore - report.bytesAfter)))
                logger.info(
                    "compacted segments",
                    metadata: [
                        "segments": "\(report.segmentsCompacted)", "before": "\(report.bytesBefore)",
                        "after": "\(report.bytesAfter)",
                    ])
            }
            return report
        }
    }

    /// `run` (the first run of segments a compaction selected, in the log's `order`) with the
    /// segments before it in front when they take no more bytes than it does and (in the
    /// background, with history tracked) hold no retained history, so that it starts the log.
    ///
    /// A run that does not start the log keeps its deletes as markers, since an older segment may
    /// still hold the rows they delete, and compacting it again copies them again: behind a first
    /// segment that is never compacted (all live), the markers of every delete ever made would
    /// pile up, on disk and in each compaction's memory. A run that starts the log drops them, and
    /// taking the segments before a run when they are no larger bounds what the markers a run
    /// carries can grow to by the size of the segments before it.
    private func extendedToTheLogStart(
        _ run: [UInt32], order: [UInt32], stats: [UInt32: SegmentStats], retainedAfter floor: UInt64, onDemand: Bool
    ) -> [UInt32] {
        guard let start = order.firstIndex(of: run[0]), start > 0 else { return run }
        let before = order[..<start]
        func bytes(_ segments: some Sequence<UInt32>) -> Int64 {
            segments.reduce(0) { $0 + (stats[$1]?.fileBytes ?? 0) }
        }
        let retained =
            configuration.historyTracking && !onDemand && before.contains { (stats[$0]?.maxSequence ?? 0) > floor }
        return !retained && bytes(before) <= bytes(run) ? Array(before) + run : run
    }

    /// Rewrites a run of adjacent sealed segments into new ones, keeping the order of what is
    /// copied, and switches the store over to them. Returns bytes read and written.
    private func compactRun(_ run: [UInt32]) throws -> (Int64, Int64) {
        // The checkpoint's pages of the block table not read yet are read here, outside the
        // state's lock, into a copy whose pages the state's table shares: loading them under the
        // lock below then reads nothing. Compaction drops the blocks of the segments it deletes
        // from a table held whole.
        var table = state.withLock { $0.blocks }
        try table.load()
        let (files, isPrefix, floor, blockNumbers) = try state.withLock {
            state -> ([SegmentFile], Bool, UInt64, [UInt64: UInt32]) in
            let inputs = Set(run)
            var numbers: [UInt64: UInt32] = [:]
            try state.blocks.load()
            let blocks = state.blocks.stored
            for number in blocks.occupiedRanges.joined() {
                let block = blocks[number]
                if inputs.contains(block.segment) {
                    numbers[UInt64(block.segment) << 32 | UInt64(block.offset)] = UInt32(number)
                }
            }
            return (run.map { state.files[$0]! }, state.segmentOrder.first == run.first, state.historyFloor, numbers)
        }
        let tracking = configuration.historyTracking
        var outputs: [SegmentFile] = []
        var outputEnds: [Int64] = []
        var written: [WrittenRecord] = []
        var spans: [BlockSpan] = []
        var moved: [MovedRow] = []
        var copied: [CopiedRow] = []
        var pendingMoves: [(entity: Int, key: Int64, old: RowLocation, op: Int)] = []
        var builder = RecordBuilder(
            kind: .compaction, blockSize: configuration.blockSize, schemaVersion: UInt8(schemaHistory.version))
        var builderSequence: UInt64 = 0
        var bytesRead: Int64 = 0

        func append(
            _ bytes: [UInt8], sequence: UInt64, ops: [RecordOp], blocks: [BlockSpan],
            copiedFrom: (segment: UInt32, offset: Int64)?
        ) throws {
            if outputs.isEmpty || outputEnds[outputs.count - 1] + Int64(bytes.count) > Int64(configuration.segmentSize)
            {
                let id = manifestLock.withLock { $0.takeFileID() }
                outputs.append(try SegmentFile.create(id: id, directory: segmentsPath, storeID: storeID, io: io))
                outputEnds.append(Int64(SegmentFile.headerSize))
            }
            let output = outputs.count - 1
            let offset = outputEnds[output]
            try StoreError.io("write compacted segment", path: outputs[output].path) {
                try bytes.withUnsafeBytes { try io.writeAll(outputs[output].fd, $0, at: offset) }
            }
            outputEnds[output] += Int64(bytes.count)
            if copiedFrom != nil {
                for op in ops where op.block >= 0 && !op.kind.removes {
                    copied.append(
                        CopiedRow(
                            key: op.key, record: Int32(written.count), size: UInt32(op.size),
                            entity: UInt16(op.entity), block: UInt16(op.block), slot: UInt16(op.slot)))
                }
            }
            written.append(
                WrittenRecord(
                    output: output, offset: offset, sequence: sequence,
                    rowBytes: Int64(ops.reduce(0) { $0 + $1.size }), spans: spans.count..<(spans.count + blocks.count),
                    copiedFrom: copiedFrom))
            spans += blocks
        }

        func flush() throws {
            guard !builder.ops.isEmpty else { return }
            var record = builder.build(threads: configuration.commitThreads)
            RecordHeader.seal(&record.bytes, sequence: builderSequence)
            try append(
                record.bytes, sequence: builderSequence, ops: record.ops, blocks: record.blocks, copiedFrom: nil)
            for move in pendingMoves {
                let op = record.ops[move.op]
                moved.append(
                    MovedRow(
                        key: move.key, old: move.old, record: Int32(written.count - 1), start: Int32(op.start),
                        size: UInt32(op.size), entity: UInt16(move.entity), block: UInt16(op.block),
                        slot: UInt16(op.slot)))
            }
            pendingMoves = []
            builder = RecordBuilder(
                kind: .compaction, blockSize: configuration.blockSize, schemaVersion: UInt8(schemaHistory.version))
            builderSequence = 0
        }

        do {
            for file in files {
                let size = try file.size()
                bytesRead += size
                var records = SegmentRecordWindow(file: file, fileSize: size)
                var position = SegmentFile.headerSize
                while position < size {
                    let (bytes, start) = try records.record(at: Int64(position))
                    let parsed = bytes.withUnsafeBytes {
                        Self.parseRecord(in: UnsafeRawBufferPointer(rebasing: $0[start...]))
                    }
                    guard case .success(let record) = parsed else {
                        throw StoreError(
                            .corrupt, "sealed segment record fails its checksum", path: file.path,
                            offset: Int64(position))
                    }
                    try checkOperations(of: record, path: file.path, offset: Int64(position))
                    if record.kind == .transaction && tracking && record.sequence > floor {
                        try flush()
                        try append(
                            Array(bytes[start..<(start + record.length)]), sequence: record.sequence, ops: record.ops,
                            blocks: record.blocks, copiedFrom: (file.id, Int64(position)))
                    } else {
                        try copyLiveRows(
                            record, in: bytes, at: start, file: file, offset: position, blockNumbers: blockNumbers,
                            isPrefix: isPrefix, into: &builder, moves: &pendingMoves)
                        builderSequence = max(builderSequence, record.sequence)
                        if builder.rowBytes >= 1 << 20 || builder.ops.count >= Self.compactionOpsPerRecord {
                            try flush()
                        }
                    }
                    position += record.length
                }
            }
            try flush()
            for output in outputs {
                try StoreError.io("sync compacted segment", path: output.path) { try io.fsync(output.fd) }
            }
            if !outputs.isEmpty {
                try StoreError.io("sync segments directory", path: segmentsPath) { try io.syncDirectory(segmentsPath) }
            }
        } catch {
            for output in outputs { output.markObsolete() }
            throw error
        }
        do {
            try switchOver(
                run: run, outputs: outputs, ends: outputEnds,
                written: WrittenRecords(records: written, spans: spans, moved: moved, copied: copied),
                blockNumbers: blockNumbers)
        } catch {
            lifecycle.withLock { $0.failure = "compaction could not publish its manifest: \(error)" }
            throw error
        }
        for file in files { file.markObsolete() }
        return (bytesRead, outputEnds.reduce(0) { $0 + $1 })
    }

    /// The most operations a record compaction writes holds: a record of rows is cut at 1 MiB of
    /// them, and one of delete markers, which have no row, at this many, so that the operations a
    /// compaction keeps in memory at once stay bounded.
    static let compactionOpsPerRecord = 65_536

    /// Adds the rows of `record` that are still live (and, unless the run starts the log, its
    /// deletes) to the compaction record being built. The record starts at `start` of `bytes`,
    /// read from `file` at `offset`.
    private func copyLiveRows(
        _ record: ParsedRecord, in bytes: [UInt8], at start: Int, file: SegmentFile, offset: Int,
        blockNumbers: [UInt64: UInt32],
        isPrefix: Bool, into builder: inout RecordBuilder,
        moves: inout [(entity: Int, key: Int64, old: RowLocation, op: Int)]
    ) throws {
        let locations = record.ops.map { op -> RowLocation in
            guard op.block >= 0, !op.kind.removes else { return .absent }
            let span = record.blocks[op.block]
            guard let number = blockNumbers[UInt64(file.id) << 32 | UInt64(offset + span.offset)] else {
                return .absent
            }
            return RowLocation(block: number, slot: op.slot)
        }
        // The lookups read the keys' pages of a checkpoint's index not yet read, so that the
        // install after the copy finds them read.
        let live = try state.withLock { state in
            try zip(record.ops, locations).map { op, location in
                guard location.isPresent else { return false }
                return try state.entities[op.entity].location(of: op.key) == location
            }
        }
        var blocks: [Int: DecodedBlock] = [:]
        for (index, op) in record.ops.enumerated() {
            if op.kind.removes {
                if !isPrefix { builder.addMarker(.erase, entity: op.entity, key: op.key) }
                continue
            }
            guard live[index] else { continue }
            let span = record.blocks[op.block]
            let block: DecodedBlock
            if let decoded = blocks[op.block] {
                block = decoded
            } else {
                block = try Self.decodeBlock(
                    span, in: bytes, recordStart: start, path: file.path, recordOffset: Int64(offset))
                blocks[op.block] = block
            }
            guard op.slot < block.rowCount else {
                throw StoreError(
                    .corrupt, "row slot past the end of its block", path: file.path, offset: Int64(offset + span.offset)
                )
            }
            if Int(block.schemaVersion) == schemaHistory.version {
                block.withRow(at: op.slot) { encoded in
                    builder.add(.put, entity: op.entity, key: op.key, encodedRow: encoded)
                }
            } else {
                // A row of an earlier schema version is rewritten in the current one.
                let row = try decodeRow(
                    block, slot: op.slot, entity: op.entity, file: file, offset: Int64(offset + span.offset))
                builder.add(.put, entity: op.entity, key: op.key, row: row, codec: codecs[op.entity])
            }
            moves.append((op.entity, op.key, locations[index], builder.ops.count - 1))
        }
    }

    /// Installs the compaction output: moved rows whose index entry still points at the old
    /// place, history locations, segment list; then writes a checkpoint and the manifest.
    private func switchOver(
        run: [UInt32], outputs: [SegmentFile], ends: [Int64], written: WrittenRecords, blockNumbers: [UInt64: UInt32]
    ) throws {
        try manifestLock.withLock { status in
            try syncActiveSegment()
            // The block numbers of the written blocks, in the order of `written.spans`.
            let numbers = state.withLock { state in
                for (index, output) in outputs.enumerated() {
                    state.files[output.id] = output
                    state.stats[output.id] = SegmentStats(fileBytes: ends[index])
                }
                var numbers: [UInt32] = []
                numbers.reserveCapacity(written.spans.count)
                for record in written.records {
                    let segment = outputs[record.output].id
                    numbers += state.registerBlocks(
                        written.spans[record.spans], segment: segment, offset: record.offset)
                    state.stats[segment]!.maxSequence = max(state.stats[segment]!.maxSequence, record.sequence)
                    state.stats[segment]!.deadBytes += record.rowBytes
                }
                return numbers
            }
            // The moved rows go in a batch at a time, the state lock let go between batches, so
            // that reads and commits are not held up for the whole of a large compaction (a
            // second for five million rows). Until the switch below, a row reads the same from
            // either place: the input segments stay open and in the block table, and a scan
            // walks the outputs' blocks too, each row where the index names it.
            let batch = configuration.movesPerLockHold
            for start in stride(from: 0, to: written.moved.count, by: batch) {
                state.withLock { state in
                    for move in written.moved[start..<min(start + batch, written.moved.count)] {
                        let record = written.records[Int(move.record)]
                        Self.install(
                            Int(move.entity), move.key, old: move.old,
                            new: RowLocation(
                                block: numbers[record.spans.lowerBound + Int(move.block)], slot: Int(move.slot),
                                start: Int(move.start)),
                            size: Int(move.size), segment: outputs[record.output].id, in: &state)
                    }
                }
            }
            let snapshot = state.withLock { state -> Checkpoint in
                for row in written.copied {
                    let record = written.records[Int(row.record)]
                    guard let source = record.copiedFrom else { continue }
                    let block = record.spans.lowerBound + Int(row.block)
                    guard
                        let oldNumber = blockNumbers[
                            UInt64(source.segment) << 32 | UInt64(source.offset + Int64(written.spans[block].offset))]
                    else { continue }
                    Self.install(
                        Int(row.entity), row.key, old: RowLocation(block: oldNumber, slot: Int(row.slot)),
                        new: RowLocation(block: numbers[block], slot: Int(row.slot)), size: Int(row.size),
                        segment: outputs[record.output].id, in: &state)
                }
                // The copied transactions' history entries, each searched for after the one
                // before (records are written in log order, which is sequence order).
                var entry = 0
                for record in written.records {
                    guard let source = record.copiedFrom else { continue }
                    if entry == state.history.count || state.history[entry].sequence > record.sequence { entry = 0 }
                    entry = state.history[entry...].partitioningIndex { $0.sequence >= record.sequence }
                    guard entry < state.history.count, state.history[entry].sequence == record.sequence,
                        state.history[entry].segment == source.segment
                    else { continue }
                    state.history[entry].segment = outputs[record.output].id
                    state.history[entry].offset = record.offset
                    state.history[entry].firstBlock = record.spans.isEmpty ? nil : numbers[record.spans.lowerBound]
                }
                let start = state.segmentOrder.firstIndex(of: run[0])!
                state.segmentOrder.replaceSubrange(start..<(start + run.count), with: outputs.map(\.id))
                for id in run {
                    state.files[id] = nil
                    state.stats[id] = nil
                }
                state.dropBlocksOfDeletedSegments()
                return Self.captureCheckpoint(&state)
            }
            try publishCheckpoint(snapshot, status: &status)
            state.withLock { $0.bytesSinceCheckpoint = 0 }
        }
    }

    /// Points the index entry of `key` at `new` in `segment`, unless it no longer names `old`
    /// (a commit since changed or deleted the row). A row copied with its whole record keeps its
    /// start in the block (the block's bytes are the same); a moved row's is the one the builder
    /// gave it.
    private static func install(
        _ entity: Int, _ key: Int64, old: RowLocation, new: RowLocation, size: Int, segment: UInt32,
        in state: inout StoreState
    ) {
        // The key's page was read when the row was found live, and pages stay read.
        guard let current = try? state.entities[entity].location(of: key), current == old else { return }
        state.entities[entity].set(key, to: new.keepingStart(of: current), size: size)
        state.stats[segment]!.liveBytes += Int64(size)
        state.stats[segment]!.deadBytes -= Int64(size)
    }
}
