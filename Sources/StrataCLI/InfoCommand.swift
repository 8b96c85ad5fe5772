import ArgumentParser
import Foundation
import StrataStore

/// `strata info PATH [--json]`: a store's format, schema, segments, rows and history.
struct InfoCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's format, schema, segments, rows and history.",
        discussion: """
            Opens the store read-only, so it works while another process has it open for writing. \
            With --json, prints one JSON object; a missing value (no checkpoint, no history) is null.
            """)

    @OptionGroup var store: StoreArguments

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        let opened = try store.openReadOnly()
        let info = StoreInfo(opened)
        try opened.close()
        if json {
            try Output.json(info)
        } else {
            print(info.text)
        }
    }
}

/// What `strata info` reports about a store.
struct StoreInfo: Encodable {
    /// One column of an entity.
    struct ColumnInfo: Encodable {
        var name: String
        var type: String
        var nullable: Bool
        var indexed: Bool
        var keepsTombstone: Bool
    }

    /// One entity with its live row count.
    struct EntityInfo: Encodable {
        var id: Int
        var name: String
        var rows: Int
        var columns: [ColumnInfo]
    }

    /// One live segment.
    struct SegmentSummary: Encodable {
        var id: UInt32
        var file: String
        var active: Bool
        var fileBytes: Int64
        var liveBytes: Int64
        var deadBytes: Int64
    }

    /// The retained history's first and last sequence numbers.
    struct HistoryRange: Encodable {
        var first: UInt64
        var last: UInt64
    }

    var path: String
    var formatVersion: UInt32
    var storeID: String
    var lastSequence: UInt64
    var historyTracking: Bool
    var historyRange: HistoryRange?
    var historyFloor: UInt64
    var checkpoint: String?
    var indexMemoryBytes: Int
    var indexMemoryBytesWhenRead: Int
    var fetchIndexMemoryBytes: Int
    var entities: [EntityInfo]
    var segments: [SegmentSummary]

    /// Collects the information from an open store. Costs no I/O.
    init(_ store: Store) {
        path = store.path
        formatVersion = Store.formatVersion
        storeID = store.storeID.uuidString
        lastSequence = store.lastSequence
        historyTracking = store.configuration.historyTracking
        historyRange = store.historyRange.map { HistoryRange(first: $0.lowerBound, last: $0.upperBound) }
        historyFloor = store.historyFloor
        checkpoint = store.checkpointFileName.map { "checkpoints/" + $0 }
        let statistics = store.statistics
        indexMemoryBytes = statistics.indexBytes
        indexMemoryBytesWhenRead = statistics.indexBytesWhenRead
        fetchIndexMemoryBytes = statistics.fetchIndexBytes
        let entityNames = store.schema.entities.map(\.name)
        entities = store.schema.entities.map { entity in
            EntityInfo(
                id: entity.id, name: entity.name, rows: store.count(entity.id),
                columns: entity.columns.map { column in
                    var type = column.type.name
                    if case .reference(let target) = column.type, entityNames.indices.contains(target) {
                        type = "reference(\(entityNames[target]))"
                    }
                    return ColumnInfo(
                        name: column.name, type: type, nullable: column.isNullable, indexed: column.hasFetchIndex,
                        keepsTombstone: column.keepsTombstone)
                })
        }
        segments = store.segments().map { segment in
            SegmentSummary(
                id: segment.id, file: "segments/" + segment.fileName, active: segment.isActive,
                fileBytes: segment.fileBytes,
                liveBytes: segment.liveBytes, deadBytes: segment.deadBytes)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case path, formatVersion, storeID, lastSequence, historyTracking, historyRange, historyFloor, checkpoint
        case indexMemoryBytes, indexMemoryBytesWhenRead, fetchIndexMemoryBytes, entities, segments
    }

    /// Encodes every key, with `null` for a missing history range or checkpoint.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(storeID, forKey: .storeID)
        try container.encode(lastSequence, forKey: .lastSequence)
        try container.encode(historyTracking, forKey: .historyTracking)
        try container.encode(historyRange, forKey: .historyRange)
        try container.encode(historyFloor, forKey: .historyFloor)
        try container.encode(checkpoint, forKey: .checkpoint)
        try container.encode(indexMemoryBytes, forKey: .indexMemoryBytes)
        try container.encode(indexMemoryBytesWhenRead, forKey: .indexMemoryBytesWhenRead)
        try container.encode(fetchIndexMemoryBytes, forKey: .fetchIndexMemoryBytes)
        try container.encode(entities, forKey: .entities)
        try container.encode(segments, forKey: .segments)
    }

    /// The report as aligned text.
    var text: String {
        var lines = [
            "Store          \(path)",
            "Format         version \(formatVersion)",
            "UUID           \(storeID)",
            "Last sequence  \(lastSequence)",
            "History        \(historyText)",
            "Checkpoint     \(checkpoint ?? "none")",
            "Index memory   \(indexMemoryBytes) bytes now, \(indexMemoryBytesWhenRead) with every page read\(perObject(indexMemoryBytesWhenRead))",
            "Fetch indexes  \(fetchIndexMemoryBytes) bytes\(perObject(fetchIndexMemoryBytes))",
            "",
            "Entities",
        ]
        for entity in entities {
            lines.append("  \(entity.name) (id \(entity.id)): \(entity.rows) \(entity.rows == 1 ? "row" : "rows")")
            let nameWidth = entity.columns.map(\.name.count).max() ?? 0
            let typeWidth = entity.columns.map(\.type.count).max() ?? 0
            for column in entity.columns {
                let flags = [
                    column.nullable ? "nullable" : "required", column.indexed ? "indexed" : nil,
                    column.keepsTombstone ? "kept in tombstone" : nil,
                ].compactMap { $0 }.joined(separator: ", ")
                lines.append("    \(pad(column.name, nameWidth))  \(pad(column.type, typeWidth))  \(flags)")
            }
        }
        lines.append("")
        lines.append("Segments")
        for segment in segments {
            lines.append(
                "  \(segment.file)  \(segment.active ? "active" : "sealed")  \(segment.fileBytes) bytes"
                    + " (live \(segment.liveBytes), dead \(segment.deadBytes))")
        }
        return lines.joined(separator: "\n")
    }

    private var historyText: String {
        guard historyTracking else { return "not tracked" }
        let retained = historyRange.map { "sequences \($0.first)...\($0.last) retained" } ?? "none retained"
        return historyFloor > 0 ? "\(retained); deleted up to \(historyFloor)" : retained
    }

    /// `bytes` per live object, for a store with live objects.
    private func perObject(_ bytes: Int) -> String {
        let live = entities.reduce(0) { $0 + $1.rows }
        guard live > 0 else { return "" }
        return " (\(String(format: "%.1f", Double(bytes) / Double(live))) bytes per live object)"
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.padding(toLength: width, withPad: " ", startingAt: 0)
    }
}
