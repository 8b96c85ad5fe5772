import Foundation
import Logging

/// One problem ``Store/verify(at:progress:)`` found: the file, the byte offset in it and what is
/// wrong. `Sendable`.
public struct VerificationProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The path of the file concerned.
    public var file: String
    /// The byte offset in ``file`` where the problem starts.
    public var offset: Int64
    /// What is wrong, in one sentence.
    public var message: String

    /// The file, offset and message in one line.
    public var description: String { "\(file) offset \(offset): \(message)" }
}

/// What ``Store/verify(at:progress:)`` checked and the problems it found. `Sendable`.
public struct VerificationReport: Sendable, Hashable, Codable {
    /// The store directory verified.
    public var path: String
    /// The problems found, in the order found; empty for a sound store.
    public var problems: [VerificationProblem] = []
    /// Segment files read.
    public var segmentsChecked = 0
    /// Log records whose checksum and layout were checked.
    public var recordsChecked = 0
    /// Blocks whose checksum, decompression and layout were checked.
    public var blocksChecked = 0
    /// Rows decoded with the stored schema.
    public var rowsChecked = 0
    /// Bytes of segment files read.
    public var bytesChecked: Int64 = 0
    /// Whether the manifest names a checkpoint, which was then read and checked.
    public var checkpointChecked = false
    /// Checks that could not run, and why (for example, index comparisons after damage to the log).
    public var skippedChecks: [String] = []

    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }
}

extension Store {
    /// Checks every file of the store at `url` without modifying any of them.
    ///
    /// Reads the manifest; walks every record of every live segment in log order, checking each
    /// record's checksum, each block's checksum, decompression and layout, and that each row decodes
    /// with the stored schema; decodes the checkpoint, if the manifest names one, and compares its
    /// indexes with those rebuilt by replaying the log up to its position; and compares the indexes
    /// rebuilt from the whole log with those a read-only ``open(at:schema:configuration:)`` builds.
    /// Row locations are compared as (segment, block offset, slot), so block numbering does not
    /// matter; fetch indexes must hold exactly the indexed values of the rows live at that point of
    /// the log. A torn tail of the active segment is reported as a problem too.
    ///
    /// Costs a read of every segment and of the checkpoint, two replays of the log, and memory for
    /// two copies of the indexes.
    ///
    /// - Important: Verification takes no lock, so it may run while another process has the store
    ///   open. Commits, checkpoints or compactions made meanwhile can show up as problems or
    ///   skipped checks; verify a closed store for a definitive answer.
    /// - Parameters:
    ///   - url: the store directory.
    ///   - progress: called now and then with the segment bytes checked so far and their total.
    /// - Returns: what was checked and every problem found, each naming a file and an offset.
    /// - Throws: ``StoreError`` `notFound` when there is no directory at `url`, `unsupportedFormat`
    ///   when it is not a store of this format, `io` when the manifest cannot be read. Damage is
    ///   reported in the returned report, never thrown.
    public static func verify(
        at url: URL, progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws -> VerificationReport {
        var verifier = StoreVerifier(path: url.path)
        return try verifier.run(progress: progress)
    }
}

/// The body of ``Store/verify(at:progress:)``: reads a store's files and collects problems.
struct StoreVerifier {
    private let path: String
    private let io: any FileIO = SystemFileIO()
    private var report: VerificationReport
    private var codecs: [RowCodec] = []
    /// The codecs of every schema version, by version then entity.
    private var versionCodecs: [[RowCodec]] = []

    /// Creates a verifier of the store directory at `path`.
    init(path: String) {
        self.path = path
        report = VerificationReport(path: path)
    }

    private var manifestPath: String { path + "/manifest" }

    /// Runs every check and returns the report.
    mutating func run(progress: ((Int64, Int64) -> Void)?) throws -> VerificationReport {
        guard let manifest = try readManifest() else { return report }
        versionCodecs = manifest.schemaHistory.codecs(for: manifest.schema)
        codecs = versionCodecs[manifest.schemaHistory.version]
        let checkpoint = readCheckpoint(manifest)
        let replay = walkLog(
            manifest, checkpointPosition: checkpoint.map { ($0.checkpoint.segment, $0.checkpoint.offset) },
            progress: progress)
        let checkpointMatches = checkpoint.map { compareCheckpoint($0, replay: replay) } ?? true
        if checkpointMatches {
            compareWithOpenStore(manifest, replay: replay, checkpoint: checkpoint)
        } else {
            report.skippedChecks.append(
                "comparing the index with a read-only open: it loads the checkpoint, which differs from the log")
        }
        return report
    }

    // MARK: Problems

    /// Records a problem.
    private mutating func problem(_ file: String, _ offset: Int64, _ message: String) {
        report.problems.append(VerificationProblem(file: file, offset: offset, message: message))
    }

    /// Records a store error as a problem, in `file` at offset 0 unless the error says where.
    private mutating func problem(_ error: any Error, file: String, adding note: String = "") {
        guard let error = error as? StoreError else {
            problem(file, 0, "\(error)" + note)
            return
        }
        problem(error.path ?? file, error.offset ?? 0, error.message + (error.cause.map { " [\($0)]" } ?? "") + note)
    }

    // MARK: Manifest and checkpoint

    /// Reads the manifest, or records a problem and returns `nil` when it is damaged.
    private mutating func readManifest() throws -> Manifest? {
        guard let names = try? io.contentsOfDirectory(path) else {
            throw StoreError(.notFound, "no store at this path", path: path)
        }
        guard names.contains("manifest") else {
            throw StoreError(.unsupportedFormat, "the directory is not a Strata store (no manifest)", path: path)
        }
        let bytes = try StoreError.io("read manifest", path: manifestPath) { try io.readFile(manifestPath) }
        do {
            return try Manifest.decode(bytes, path: manifestPath)
        } catch let error as StoreError where error.code == .corrupt {
            problem(error, file: manifestPath)
            report.skippedChecks.append(
                "everything else: the manifest, which names the segments and the schema, is damaged")
            return nil
        }
    }

    /// A checkpoint read and decoded, with its file and where its sections start.
    private struct LoadedCheckpoint {
        var checkpoint: Checkpoint
        var file: String
        var sectionOffsets: [Int64]

        /// The offset of the directory section of `entity` (or of its fetch indexes).
        func sectionOffset(entity: Int, fetchIndex: Bool) -> Int64 {
            fetchIndex ? checkpoint.fetchIndexSections[entity].place.offset : sectionOffsets[2 + entity]
        }
    }

    /// Reads and decodes the manifest's checkpoint; records a problem and returns `nil` when it is
    /// unreadable, damaged or does not match the manifest's segments.
    private mutating func readCheckpoint(_ manifest: Manifest) -> LoadedCheckpoint? {
        guard let id = manifest.checkpoint else { return nil }
        report.checkpointChecked = true
        let file = path + "/checkpoints/" + Checkpoint.fileName(id)
        let ignored = " (opening ignores the checkpoint and replays the whole log)"
        do {
            var sizes: [UInt32: Int64] = [:]
            var checkpoint = try Checkpoint.open(path: file, schema: manifest.schema, io: io) { order in
                for id in order {
                    sizes[id] = try? SegmentFile.open(
                        id: id, directory: path + "/segments", storeID: manifest.storeID, writable: false, io: io
                    ).size()
                }
                return sizes
            }
            let offsets = checkpoint.sectionOffsets
            // Every page of the block table and of the object index, each verified as it is read.
            try checkpoint.state.blocks.load()
            try checkpoint.state.entities.forEach { index in try index.pages.forEach { try $0.prepare() } }
            do {
                checkpoint.state.fetchIndexes = try Checkpoint.readFetchIndexes(
                    checkpoint.fetchIndexSections, schema: manifest.schema)
            } catch is BinaryReader.Malformed {
                throw StoreError(
                    .corrupt, "checkpoint fetch indexes do not parse", path: file,
                    offset: checkpoint.fetchIndexSections.first?.place.offset ?? 0)
            }
            guard let position = manifest.segments.firstIndex(of: checkpoint.segment),
                Array(manifest.segments[...position]) == checkpoint.state.segmentOrder
            else {
                problem(
                    file, offsets[0],
                    "the checkpoint's segments \(checkpoint.state.segmentOrder) do not match the manifest's \(manifest.segments)"
                        + ignored)
                return nil
            }
            try checkpoint.checkPlaces(segmentSizes: sizes, path: file)
            return LoadedCheckpoint(checkpoint: checkpoint, file: file, sectionOffsets: offsets)
        } catch {
            problem(error, file: file, adding: ignored)
            return nil
        }
    }

    // MARK: Log

    /// Walks every live segment in log order, checking every record and replaying the sound ones.
    private mutating func walkLog(
        _ manifest: Manifest, checkpointPosition: (UInt32, Int64)?, progress: ((Int64, Int64) -> Void)?
    ) -> LogReplay {
        var replay = LogReplay(
            schema: manifest.schema, historyTracking: manifest.historyTracking, checkpointPosition: checkpointPosition)
        let segments = manifest.segments.map { openSegment($0, storeID: manifest.storeID) }
        let total = segments.reduce(Int64(0)) { $0 + ($1?.size ?? 0) }
        var done: Int64 = 0
        for (index, segment) in segments.enumerated() {
            guard let segment else {
                replay.isIntact = false
                continue
            }
            walkSegment(segment.file, size: segment.size, isActive: index == segments.count - 1, replay: &replay) {
                progress?(done + $0, total)
            }
            done += segment.size
            progress?(done, total)
        }
        return replay
    }

    /// Opens a segment read-only and checks its header; records a problem and returns `nil` when it fails.
    private mutating func openSegment(_ id: UInt32, storeID: UUID) -> (file: SegmentFile, size: Int64)? {
        let directory = path + "/segments"
        do {
            let file = try SegmentFile.open(id: id, directory: directory, storeID: storeID, writable: false, io: io)
            return (file, try file.size())
        } catch {
            problem(error, file: directory + "/" + SegmentFile.fileName(id))
            return nil
        }
    }

    /// Checks every record of one segment and replays the sound ones. The log of the active
    /// segment ends at its first zero byte where only zeros (space allocated ahead) follow.
    private mutating func walkSegment(
        _ file: SegmentFile, size: Int64, isActive: Bool, replay: inout LogReplay, progress: (Int64) -> Void
    ) {
        let bytes: [UInt8]
        do {
            bytes = try file.read(at: 0, count: Int(size))
        } catch {
            problem(error, file: file.path)
            replay.isIntact = false
            return
        }
        report.segmentsChecked += 1
        report.bytesChecked += Int64(bytes.count)
        var position = SegmentFile.headerSize
        var reported = position
        walk: while position < bytes.count {
            replay.reach(file.id, Int64(position))
            let start = position
            let outcome = bytes.withUnsafeBytes {
                Store.parseRecord(in: UnsafeRawBufferPointer(rebasing: $0[start...]))
            }
            switch outcome {
            case .success(let record):
                report.recordsChecked += 1
                if let images = checkRecord(record, in: bytes, at: position, file: file.path, replay: &replay) {
                    replay.apply(record, images: images, segment: file.id, offset: Int64(position))
                } else {
                    replay.isIntact = false
                }
                position += record.length
            case .failure(let error):
                if isActive && bytes.withUnsafeBytes({ Store.isZero(UnsafeRawBufferPointer(rebasing: $0[start...])) }) {
                    break walk
                }
                guard
                    let next = skipDamagedRecord(
                        in: bytes, at: position, errorOffset: error.offset, file: file.path, isActive: isActive)
                else {
                    if !isActive { replay.isIntact = false }
                    replay.end = (file.id, Int64(position))
                    return
                }
                replay.isIntact = false
                position = next
            }
            if position - reported >= 1 << 20 {
                progress(Int64(position))
                reported = position
            }
        }
        replay.reach(file.id, Int64(position))
        replay.end = (file.id, Int64(position))
    }

    /// Records the problem of a record that fails its checksum or does not parse; returns where
    /// the next valid record starts, or `nil` when nothing valid follows.
    private mutating func skipDamagedRecord(
        in bytes: [UInt8], at position: Int, errorOffset: Int, file: String, isActive: Bool
    ) -> Int? {
        let rest = bytes.count - position
        let isTail = bytes.withUnsafeBytes { Store.isTail(UnsafeRawBufferPointer(rebasing: $0[position...])) }
        if isTail && isActive {
            problem(
                file, Int64(position),
                "torn tail (would be truncated on open): \(rest) bytes after the last valid record")
            return nil
        }
        let message = "log record fails its checksum or does not parse"
        if isTail {
            problem(
                file, Int64(position + errorOffset),
                message + "; the remaining \(rest) bytes of the segment are unchecked")
            return nil
        }
        // Where the length field points, unless the length field is the damage (a zero length
        // would never move on): then the first offset where a record parses, which `isTail` found.
        let next = bytes.withUnsafeBytes { raw -> Int in
            func parses(at offset: Int) -> Bool {
                guard offset < raw.count,
                    case .success = Store.parseRecord(in: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                else {
                    return false
                }
                return true
            }
            let length = ParsedRecord.declaredLength(UnsafeRawBufferPointer(rebasing: raw[position...]))
            if length >= RecordHeader.size && parses(at: position + length) { return position + length }
            return ((position + 1)..<raw.count).first { parses(at: $0) } ?? raw.count
        }
        problem(
            file, Int64(position + errorOffset), message + "; skipped \(next - position) bytes to the next valid record"
        )
        return next
    }

    /// A decoded block and its rows.
    private struct CheckedBlock {
        var block: DecodedBlock
        var rows: [Row]
    }

    /// Checks a parsed record's blocks, rows, operations and sequence number; returns each
    /// operation's row image (`nil` for a marker), or `nil` when the record is unsound.
    private mutating func checkRecord(
        _ record: ParsedRecord, in bytes: [UInt8], at position: Int, file: String, replay: inout LogReplay
    ) -> [Row?]? {
        var blocks: [CheckedBlock] = []
        for span in record.blocks {
            guard let block = checkBlock(in: bytes, at: position + span.offset, length: span.length, file: file) else {
                return nil
            }
            blocks.append(block)
        }
        if record.kind == .transaction {
            if record.sequence <= replay.lastSequence {
                problem(
                    file, Int64(position),
                    "transaction sequence \(record.sequence) does not follow \(replay.lastSequence)")
            }
            replay.lastSequence = max(replay.lastSequence, record.sequence)
        }
        var images: [Row?] = []
        for op in record.ops {
            if let message = opProblem(op, blocks: blocks) {
                problem(file, Int64(position), message)
                return nil
            }
            images.append(op.block >= 0 ? blocks[op.block].rows[op.slot] : nil)
        }
        return images
    }

    /// Checks one block: checksum, decompression, layout, and that every row decodes with the schema.
    private mutating func checkBlock(in bytes: [UInt8], at start: Int, length: Int, file: String) -> CheckedBlock? {
        report.blocksChecked += 1
        let block: DecodedBlock
        do {
            block = try bytes.withUnsafeBytes {
                try DecodedBlock(onDisk: UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)]))
            }
        } catch {
            let offset = (error as? BinaryReader.Malformed)?.offset ?? 0
            problem(
                file, Int64(start + offset),
                "block fails its checksum, does not decompress or has an inconsistent layout")
            return nil
        }
        guard codecs.indices.contains(block.entity) else {
            problem(file, Int64(start), "block holds rows of entity \(block.entity), which the schema does not have")
            return nil
        }
        guard Int(block.schemaVersion) < versionCodecs.count else {
            problem(
                file, Int64(start),
                "block names schema version \(block.schemaVersion), which the manifest does not have")
            return nil
        }
        let codec = versionCodecs[Int(block.schemaVersion)][block.entity]
        var rows: [Row] = []
        rows.reserveCapacity(block.rowCount)
        for slot in 0..<block.rowCount {
            do {
                rows.append(try block.withRow(at: slot) { try codec.decode($0) })
            } catch {
                problem(
                    file, Int64(start),
                    "row \(slot) of the block does not decode as a \(codec.entityName) row of the stored schema")
                return nil
            }
        }
        report.rowsChecked += rows.count
        return CheckedBlock(block: block, rows: rows)
    }

    /// What is wrong with an operation of a record whose blocks decoded, or `nil` when it is sound.
    private func opProblem(_ op: RecordOp, blocks: [CheckedBlock]) -> String? {
        guard codecs.indices.contains(op.entity) else {
            return "operation on entity \(op.entity), which the schema does not have"
        }
        let name = codecs[op.entity].entityName
        guard op.key > 0 else { return "operation on \(name) key \(op.key); keys are positive" }
        // The row image, and the prior row history reads for an update or delete.
        for (index, slot) in [(op.block, op.slot), (op.priorBlock, op.priorSlot)] where index >= 0 {
            let block = blocks[index]
            guard block.block.entity == op.entity, slot < block.rows.count, block.block.key(at: slot) == op.key else {
                return
                    "operation on \(name) \(op.key) points at slot \(slot) of block \(index), which holds another row"
            }
        }
        return nil
    }

    // MARK: Index comparisons

    /// Compares the checkpoint's indexes with those replayed up to its position; returns whether they match.
    private mutating func compareCheckpoint(_ loaded: LoadedCheckpoint, replay: LogReplay) -> Bool {
        let checkpoint = loaded.checkpoint
        let position = "\(SegmentFile.fileName(checkpoint.segment)) offset \(checkpoint.offset)"
        guard let snapshot = replay.snapshot else {
            if replay.isIntact {
                problem(
                    loaded.file, loaded.sectionOffsets[0],
                    "the checkpoint's log position (\(position)) is not the end of a valid record of the log")
                return false
            }
            report.skippedChecks.append(
                "comparing the checkpoint with the log: the log is damaged before its position (\(position))")
            return true
        }
        guard snapshot.isIntact else {
            report.skippedChecks.append(
                "comparing the checkpoint with the log: the log is damaged before its position (\(position))")
            return true
        }
        let differences = IndexDifference.between(
            checkpoint.state, "the checkpoint", snapshot.state, "the log up to it", schema: replay.schema)
        for difference in differences {
            problem(
                loaded.file, loaded.sectionOffset(entity: difference.entity, fetchIndex: difference.isFetchIndex),
                difference.message)
        }
        // Blocks without a live row are read by scans too: every block of a live segment in the
        // checkpoint's table must be one the log has (those of deleted segments are never read).
        // Both tables are read whole: the log's is built by the replay, the checkpoint's pages
        // were read by ``readCheckpoint(_:)``.
        let logBlocks = Set(snapshot.state.blocks.stored)
        let liveSegments = Set(checkpoint.state.segmentOrder)
        let blocks = checkpoint.state.blocks.stored
        let stray = blocks.occupiedRanges.joined().lazy.map { blocks[$0] }.first {
            liveSegments.contains($0.segment) && !logBlocks.contains($0)
        }
        if let stray {
            problem(
                loaded.file, loaded.sectionOffsets[1],
                "the checkpoint's block table names a block at \(stray.offset) of "
                    + "\(SegmentFile.fileName(stray.segment)) (\(stray.length) bytes, entity \(stray.entity)) "
                    + "that the log up to it does not have")
        }
        // History is read straight from the records the checkpoint's history directory names.
        var strayRecord: HistoryEntry?
        if replay.historyTracking {
            func place(_ entry: HistoryEntry) -> HistoryEntry {
                var place = entry
                place.firstBlock = nil
                return place
            }
            let logRecords = Set(snapshot.state.history.map(place))
            strayRecord = checkpoint.state.history.first { !logRecords.contains(place($0)) }
        }
        if let strayRecord {
            problem(
                loaded.file, loaded.sectionOffsets[0],
                "the checkpoint's history names a record of sequence \(strayRecord.sequence) at "
                    + "\(strayRecord.offset) of \(SegmentFile.fileName(strayRecord.segment)) "
                    + "(\(strayRecord.length) bytes) that the log up to it does not have")
        }
        return differences.isEmpty && stray == nil && strayRecord == nil
    }

    /// Compares the indexes replayed from the whole log with those a read-only open builds.
    private mutating func compareWithOpenStore(_ manifest: Manifest, replay: LogReplay, checkpoint: LoadedCheckpoint?) {
        let skipped = "comparing the index with a read-only open: "
        guard replay.isIntact, let end = replay.end else {
            report.skippedChecks.append(skipped + "the log is damaged")
            return
        }
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = false
        configuration.cacheSize = 8 << 20
        configuration.logger = Logger(label: "strata.verify") { _ in SwiftLogNoOpLogHandler() }
        let opened: StoreState
        do {
            let store = try Store.open(at: URL(fileURLWithPath: path), schema: nil, configuration: configuration)
            store.loadPendingFetchIndexes()
            // Its block table whole: the comparison reads it without I/O.
            opened = try store.state.withLock { state in
                try state.blocks.load()
                return state
            }
            try store.close()
        } catch {
            problem(error, file: manifestPath, adding: " (a read-only open fails)")
            return
        }
        guard opened.segmentOrder == manifest.segments, opened.activeSegment == end.segment,
            opened.activeEnd == end.offset
        else {
            report.skippedChecks.append(skipped + "the store changed during verification")
            return
        }
        for difference in IndexDifference.between(
            replay.indexes, "the whole log", opened, "a read-only open", schema: replay.schema)
        {
            if let checkpoint {
                problem(
                    checkpoint.file,
                    checkpoint.sectionOffset(entity: difference.entity, fetchIndex: difference.isFetchIndex),
                    difference.message)
            } else {
                problem(manifestPath, 0, difference.message)
            }
        }
    }
}

/// The indexes rebuilt from the log: the object index by replaying every record as opening does,
/// the fetch indexes from the indexed values of the rows live at the end.
///
/// Fetch indexes are not replayed incrementally: an update that changes no indexed column does not
/// touch them, so a replay from the start after compaction dropped a key's older images would miss
/// the key. What they must hold is each live row's current values, whatever the log's history.
private struct LogReplay {
    /// The schema the log is read with.
    let schema: Schema
    /// Whether the store keeps history.
    let historyTracking: Bool
    /// The checkpoint's log position, where ``snapshot`` is taken.
    let checkpointPosition: (segment: UInt32, offset: Int64)?
    /// The replayed object index, block table and history (fetch indexes left empty).
    var state: StoreState
    /// Per live row of an entity with fetch indexes, its indexed values (other columns `nil`).
    var indexedRows: [EntityKey: Row] = [:]
    /// The indexes at the checkpoint's position, and whether the log was sound up to it.
    var snapshot: (state: StoreState, isIntact: Bool)?
    /// Whether the log is sound so far, but for a torn tail.
    var isIntact = true
    /// Where the valid log ends: the last segment and the end of its last valid record.
    var end: (segment: UInt32, offset: Int64)?
    /// The newest transaction sequence seen.
    var lastSequence: UInt64 = 0

    init(schema: Schema, historyTracking: Bool, checkpointPosition: (UInt32, Int64)?) {
        self.schema = schema
        self.historyTracking = historyTracking
        self.checkpointPosition = checkpointPosition
        state = StoreState(schema: schema)
    }

    /// The replayed indexes now, fetch indexes included.
    var indexes: StoreState {
        let columns = schema.entities.map(\.indexedColumns)
        var pairs = columns.map { Dictionary(uniqueKeysWithValues: $0.map { ($0, [(Value, PrimaryKey)]()) }) }
        for (id, row) in indexedRows {
            for column in columns[id.entity] { pairs[id.entity][column, default: []].append((row[column], id.key)) }
        }
        var indexes = state
        indexes.fetchIndexes = pairs.map { $0.mapValues(OrderedIndex.init(unsorted:)) }
        return indexes
    }

    /// Notes that the walk reached the record boundary at `offset` of `segment`.
    mutating func reach(_ segment: UInt32, _ offset: Int64) {
        guard snapshot == nil, let position = checkpointPosition, position == (segment, offset) else { return }
        snapshot = (indexes, isIntact)
    }

    /// Applies a sound record, with the row image of each operation (`nil` for a marker).
    mutating func apply(_ record: ParsedRecord, images: [Row?], segment: UInt32, offset: Int64) {
        for (index, op) in record.ops.enumerated() {
            let columns = schema.entities[op.entity].indexedColumns
            guard !columns.isEmpty else { continue }
            let id = EntityKey(entity: op.entity, key: op.key)
            indexedRows[id] = op.kind.removes ? nil : images[index].map { Self.indexedValues($0, columns) }
        }
        let summary = RecordSummary(
            kind: record.kind, sequence: record.sequence, length: record.length, ops: record.ops, blocks: record.blocks)
        state.apply(summary, segment: segment, offset: offset, historyTracking: historyTracking)
    }

    /// `row` with every column but `columns` set to `nil`.
    private static func indexedValues(_ row: Row, _ columns: [Int]) -> Row {
        var reduced = Row(Array(repeating: .null, count: row.count))
        for column in columns { reduced[column] = row[column] }
        return reduced
    }
}

/// One way two index states differ.
private struct IndexDifference {
    /// The entity whose index differs.
    var entity: Int
    /// Whether a fetch index (rather than the object index) differs.
    var isFetchIndex: Bool
    /// What differs.
    var message: String

    /// Where a row is: its segment, the offset, length and entity of its block and its slot;
    /// independent of block numbering.
    private struct RowPlace: Equatable, CustomStringConvertible {
        var segment: UInt32
        var blockOffset: UInt32
        var blockLength: UInt32
        var entity: UInt16
        var slot: Int

        var description: String {
            "\(SegmentFile.fileName(segment)) block at \(blockOffset) (\(blockLength) bytes, entity \(entity)) "
                + "slot \(slot)"
        }
    }

    /// One entry of a fetch index.
    private struct FetchEntry: Equatable {
        var value: Value
        var key: PrimaryKey
    }

    /// The differences between two index states, named `leftName` and `rightName` in messages.
    static func between(
        _ left: StoreState, _ leftName: String, _ right: StoreState, _ rightName: String, schema: Schema
    ) -> [IndexDifference] {
        schema.entities.indices.flatMap { entity in
            objectIndexDifferences(entity, left, leftName, right, rightName, schema: schema)
                + fetchIndexDifferences(entity, left, leftName, right, rightName, schema: schema)
        }
    }

    private static func objectIndexDifferences(
        _ entity: Int, _ left: StoreState, _ leftName: String, _ right: StoreState, _ rightName: String, schema: Schema
    ) -> [IndexDifference] {
        let name = schema.entities[entity].name
        var differences: [IndexDifference] = []
        let (leftIndex, rightIndex) = (left.entities[entity], right.entities[entity])
        if leftIndex.liveCount != rightIndex.liveCount {
            differences.append(
                IndexDifference(
                    entity: entity, isFetchIndex: false,
                    message:
                        "\(name) has \(leftIndex.liveCount) live rows in \(leftName) but \(rightIndex.liveCount) in \(rightName)"
                ))
        }
        var differing: [(key: Int64, left: RowPlace?, right: RowPlace?)] = []
        for key in 1..<max(leftIndex.keyLimit, rightIndex.keyLimit, 1) {
            let places = (place(of: key, entity, in: left), place(of: key, entity, in: right))
            if places.0 != places.1 { differing.append((key, places.0, places.1)) }
        }
        if let first = differing.first {
            let describe = { (place: RowPlace?) in place.map { "at \($0)" } ?? "absent" }
            differences.append(
                IndexDifference(
                    entity: entity, isFetchIndex: false,
                    message: "object index of \(name) differs for \(differing.count) keys; key \(first.key) is "
                        + "\(describe(first.left)) in \(leftName) but \(describe(first.right)) in \(rightName)"))
        }
        return differences
    }

    private static func fetchIndexDifferences(
        _ entity: Int, _ left: StoreState, _ leftName: String, _ right: StoreState, _ rightName: String, schema: Schema
    ) -> [IndexDifference] {
        // Copies whose reads merge their pending changes (a live store's may have some).
        var (left, right) = (left, right)
        let (leftIndexes, rightIndexes) = (left.fetchIndexes[entity], right.fetchIndexes[entity])
        let columns = Set(leftIndexes.keys).union(rightIndexes.keys).sorted()
        return columns.compactMap { column -> IndexDifference? in
            let leftEntries = entries(leftIndexes[column])
            let rightEntries = entries(rightIndexes[column])
            guard leftEntries != rightEntries else { return nil }
            let first =
                zip(leftEntries, rightEntries).enumerated().first { $1.0 != $1.1 }?.offset
                ?? min(leftEntries.count, rightEntries.count)
            let describe = { (entries: [FetchEntry]) in
                first < entries.count ? "(\(entries[first].value), key \(entries[first].key))" : "the end"
            }
            let qualifiedName = schema.entities[entity].name + "." + schema.entities[entity].columns[column].name
            return IndexDifference(
                entity: entity, isFetchIndex: true,
                message: "fetch index on \(qualifiedName) has \(leftEntries.count) entries in \(leftName) and "
                    + "\(rightEntries.count) in \(rightName); entry \(first) is \(describe(leftEntries)) in \(leftName) "
                    + "but \(describe(rightEntries)) in \(rightName)")
        }
    }

    /// Where `key`'s row of `entity` is in `state`, or `nil` when it is absent.
    private static func place(of key: Int64, _ entity: Int, in state: StoreState) -> RowPlace? {
        // Every page of a checkpoint's index was read and verified before the comparison.
        let location = (try? state.entities[entity].location(of: key)) ?? .absent
        guard location.isPresent else { return nil }
        // Every page of a checkpoint's block table too.
        let block = state.blocks.stored[Int(location.block)]
        return RowPlace(
            segment: block.segment, blockOffset: block.offset, blockLength: block.length, entity: block.entity,
            slot: location.slot)
    }

    /// The entries of a fetch index, in index order.
    private static func entries(_ index: OrderedIndex?) -> [FetchEntry] {
        var entries: [FetchEntry] = []
        index?.forEach { entries.append(FetchEntry(value: $0, key: $1)) }
        return entries
    }
}
