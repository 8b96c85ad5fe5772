import Foundation

/// One figure of the report, measured for each engine.
enum Metric: String, CaseIterable, Codable, Sendable {
    case bulkInsert = "W1"
    case smallSavesDurable = "W2.durable"
    case smallSavesRelaxed = "W2.relaxed"
    case coldOpen = "W3"
    case randomFaults = "W4"
    case fullScan = "W6"
    case update = "W7"
    case compactionRate = "W8.rate"
    case compactionReadP99 = "W8.readP99"
    case compactionSize = "W8.afterOverBefore"
    case size = "W10"

    /// Which way is better.
    enum Better: String, Codable { case higher, lower }

    var title: String {
        switch self {
        case .bulkInsert: "W1 bulk insert"
        case .smallSavesDurable: "W2 small saves, durable"
        case .smallSavesRelaxed: "W2 small saves, relaxed"
        case .coldOpen: "W3 cold open (median of 5)"
        case .randomFaults: "W4 random faults"
        case .fullScan: "W6 full scan"
        case .update: "W7 update 10%"
        case .compactionRate: "W8 compaction"
        case .compactionReadP99: "W8 p99 read during compaction"
        case .compactionSize: "W8 bytes on disk after/before"
        case .size: "W10 size after W1"
        }
    }

    var unit: String {
        switch self {
        case .bulkInsert, .fullScan, .update: "objects/s"
        case .smallSavesDurable, .smallSavesRelaxed: "saves/s"
        case .coldOpen, .compactionReadP99: "ms"
        case .randomFaults: "lookups/s"
        case .compactionRate: "MB/s"
        case .compactionSize: "ratio"
        case .size: "bytes/object"
        }
    }

    var better: Better {
        switch self {
        case .coldOpen, .compactionReadP99, .compactionSize, .size: .lower
        default: .higher
        }
    }
}

/// What one engine measured: the figures, details behind them, and checksums both must share.
struct EngineResults: Sendable {
    var figures: [Metric: Double] = [:]
    var details: [String: Double] = [:]
    var checksums: [String: Int64] = [:]
}

/// The side-by-side report: a table for people and one JSON object for tools.
struct Report {
    var rows: Int
    var departments: Int
    var seed: UInt64
    var sqliteVersion: String
    var strata: EngineResults
    var sqlite: EngineResults

    func table() -> String {
        let header = ["workload", "unit", "Strata", "SQLite", "Strata/SQLite", "better"]
        var lines: [[String]] = [header]
        for metric in Metric.allCases {
            guard let s = strata.figures[metric], let q = sqlite.figures[metric] else { continue }
            lines.append([
                metric.title, metric.unit, Self.format(s), Self.format(q), Self.format(ratio(s, q)),
                metric.better == .higher ? "higher (>1 = Strata ahead)" : "lower (<1 = Strata ahead)",
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for (number, line) in lines.enumerated() {
            let cells = line.enumerated().map { column, cell in
                column < 2 || column == 5
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            out += cells.joined(separator: "  ") + "\n"
            if number == 0 {
                out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
            }
        }
        return out
    }

    private func ratio(_ strata: Double, _ sqlite: Double) -> Double {
        sqlite == 0 ? .nan : strata / sqlite
    }

    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if magnitude >= 10_000 {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.maximumFractionDigits = 0
            return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value))
        }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }

    private struct JSONFigure: Encodable {
        var id: String
        var name: String
        var unit: String
        var better: Metric.Better
        var strata: Double?
        var sqlite: Double?
        var ratio: Double?
    }

    private struct JSONReport: Encodable {
        var benchmark = "strata-bench"
        var rows: Int
        var departments: Int
        var seed: UInt64
        var build: String
        var sqliteVersion: String
        var sqliteSettings: String
        var figures: [JSONFigure]
        var details: [String: [String: Double]]
        var checksums: [String: [String: Int64]]
    }

    func json(pretty: Bool) throws -> String {
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        let figures = Metric.allCases.compactMap { metric -> JSONFigure? in
            let s = strata.figures[metric]
            let q = sqlite.figures[metric]
            guard s != nil || q != nil else { return nil }
            return JSONFigure(
                id: metric.rawValue, name: metric.title, unit: metric.unit, better: metric.better,
                strata: finite(s), sqlite: finite(q),
                ratio: finite(s.flatMap { s in q.map { ratio(s, $0) } }))
        }
        #if DEBUG
            let build = "debug"
        #else
            let build = "release"
        #endif
        let report = JSONReport(
            rows: rows, departments: departments, seed: seed, build: build, sqliteVersion: sqliteVersion,
            sqliteSettings: "GRDB DatabaseQueue, journal_mode=WAL, synchronous=FULL (durable) / OFF (relaxed)",
            figures: figures,
            details: ["Strata": strata.details.filter { $0.value.isFinite },
                      "SQLite": sqlite.details.filter { $0.value.isFinite }],
            checksums: ["Strata": strata.checksums, "SQLite": sqlite.checksums])
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
