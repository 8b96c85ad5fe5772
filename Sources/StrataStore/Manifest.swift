import Foundation

/// The store's root file: format version, identity, schema, live segments in log order, the
/// newest checkpoint and the history floor. Replaced atomically, never edited in place.
///
/// Layout: `"STRATMAN"`, `u32 formatVersion`, `u32 maskedCRC32C` of the body, `u32 bodyLength`, body.
struct Manifest: Sendable {
    private static let magic = Array("STRATMAN".utf8)
    /// The format version of a manifest whose schema evolved in place: builds that cannot read
    /// rows of earlier schema versions refuse it rather than misread them.
    static let evolvedFormatVersion: UInt32 = Store.formatVersion + 1

    /// The store's UUID, also written in every segment header.
    var storeID: UUID
    /// The schema the store was written with.
    var schema: Schema
    /// Whether commits keep history.
    var historyTracking: Bool
    /// The live segments, in log order; the last is the active one.
    var segments: [UInt32]
    /// The newest index checkpoint, if any.
    var checkpoint: UInt32?
    /// History of commits with sequence ≤ this is deleted.
    var historyFloor: UInt64
    /// At least the newest committed sequence when the manifest was written.
    var lastSequence: UInt64
    /// Per entity, at least the next primary key to allocate.
    var nextKeys: [Int64]
    /// The next id for a new segment or checkpoint file.
    var nextFileID: UInt32
    /// The history floor the application asked for (an optional trailing field).
    var requestedHistoryFloor: UInt64 = 0
    /// The history consumers (an optional trailing field; older manifests end before it).
    var consumers: [String: HistoryConsumerState] = [:]
    /// How rows of earlier schema versions are read (an optional trailing field after the consumers).
    var schemaHistory = SchemaHistory()

    /// The manifest's bytes.
    func encode() -> [UInt8] {
        var body = BinaryWriter()
        withUnsafeBytes(of: storeID.uuid) { body.raw($0) }
        schema.encode(into: &body)
        body.u8(historyTracking ? 1 : 0)
        body.varint(segments.count)
        for segment in segments { body.u32(segment) }
        body.u32(checkpoint ?? 0)
        body.u64(historyFloor)
        body.u64(lastSequence)
        body.varint(nextKeys.count)
        for key in nextKeys { body.zigzag(key) }
        body.u32(nextFileID)
        if requestedHistoryFloor != 0 || !consumers.isEmpty || schemaHistory.version > 0 {
            body.u64(requestedHistoryFloor)
            body.varint(consumers.count)
            for (name, consumer) in consumers.sorted(by: { $0.key < $1.key }) {
                body.string(name)
                consumer.encode(into: &body)
            }
        }
        if schemaHistory.version > 0 { schemaHistory.encode(into: &body, schema: schema) }
        var bytes = BinaryWriter(capacity: body.count + 20)
        bytes.raw(Self.magic)
        bytes.u32(schemaHistory.version > 0 ? Self.evolvedFormatVersion : Store.formatVersion)
        bytes.u32(CRC32C.mask(CRC32C.checksum(body.bytes)))
        bytes.u32(UInt32(body.count))
        bytes.raw(body.bytes)
        return bytes.bytes
    }

    /// Parses a manifest read from `path`.
    ///
    /// - Throws: ``StoreError/Code/unsupportedFormat`` for a foreign file or version,
    ///   ``StoreError/Code/corrupt`` for a checksum failure.
    static func decode(_ bytes: [UInt8], path: String) throws -> Manifest {
        try bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            do {
                guard raw.count >= 20, Array(try reader.bytes(8)) == magic else {
                    throw StoreError(.unsupportedFormat, "not a Strata manifest", path: path, offset: 0)
                }
                let version = try reader.u32()
                guard version == Store.formatVersion || version == evolvedFormatVersion else {
                    throw StoreError(
                        .unsupportedFormat,
                        "format version \(version); this build reads \(Store.formatVersion) and \(evolvedFormatVersion)",
                        path: path, offset: 8)
                }
                let crc = try reader.u32()
                let length = Int(try reader.u32())
                let body = try reader.bytes(length)
                guard CRC32C.mask(CRC32C.checksum(body)) == crc else {
                    throw StoreError(.corrupt, "manifest checksum mismatch", path: path, offset: 12)
                }
                // Reads the body in place, so that a parse failure names its offset in the file.
                var fields = BinaryReader(
                    UnsafeRawBufferPointer(rebasing: raw[..<reader.position]), position: reader.position - length)
                var uuid = UUID().uuid
                let uuidBytes = try fields.bytes(16)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: uuidBytes) }
                let schema = try Schema.decode(from: &fields)
                let history = try fields.u8() != 0
                let segmentCount = try fields.count(limit: 1 << 24)
                var segments: [UInt32] = []
                for _ in 0..<segmentCount { segments.append(try fields.u32()) }
                let checkpoint = try fields.u32()
                let floor = try fields.sequence()
                let last = try fields.sequence()
                let keyCount = try fields.count(limit: 65_535)
                var keys: [Int64] = []
                for _ in 0..<keyCount { keys.append(try fields.nextKey()) }
                let nextFileID = try fields.u32()
                var requestedFloor: UInt64 = 0
                var consumers: [String: HistoryConsumerState] = [:]
                if !fields.isAtEnd {
                    requestedFloor = try fields.sequence()
                    for _ in 0..<(try fields.count(limit: 1 << 20)) {
                        let name = try fields.string()
                        consumers[name] = try HistoryConsumerState.decode(from: &fields)
                    }
                }
                let schemaHistory =
                    fields.isAtEnd ? SchemaHistory() : try SchemaHistory.decode(from: &fields, schema: schema)
                // Version 2 is exactly a manifest with a schema history.
                guard (version == evolvedFormatVersion) == (schemaHistory.version > 0) else {
                    throw StoreError(
                        .unsupportedFormat, "format version \(version) with schema version \(schemaHistory.version)",
                        path: path, offset: 8)
                }
                // The store indexes both without checking: the last segment is the active one,
                // and each entity allocates keys from its entry.
                guard !segments.isEmpty, keys.count == schema.entities.count else {
                    throw StoreError(
                        .corrupt, "manifest names no segment or not one next key per entity", path: path, offset: 20)
                }
                return Manifest(
                    storeID: UUID(uuid: uuid), schema: schema, historyTracking: history, segments: segments,
                    checkpoint: checkpoint == 0 ? nil : checkpoint, historyFloor: floor, lastSequence: last,
                    nextKeys: keys, nextFileID: nextFileID, requestedHistoryFloor: requestedFloor, consumers: consumers,
                    schemaHistory: schemaHistory)
            } catch let error as BinaryReader.Malformed {
                throw StoreError(.corrupt, "manifest does not parse", path: path, offset: Int64(error.offset))
            }
        }
    }
}
