import Foundation

/// The side-by-side report: a table for people and one JSON object for tools.
struct GraphReport {
    var rows: Int
    var departments: Int
    var seed: UInt64
    var durability: GraphDurability
    var access: GraphAccess
    var sqliteVersion: String
    var strata: EngineResults
    var sqlite: EngineResults

    func table() -> String {
        let header = ["workload", "unit", "Strata", "SQLite", "Strata/SQLite", "better"]
        var lines: [[String]] = [header]
        for metric in GraphMetric.allCases {
            let s = strata.figures[metric]
            let q = sqlite.figures[metric]
            guard s != nil || q != nil else { continue }
            lines.append([
                metric.title, metric.unit, s.map(Self.format) ?? "-", q.map(Self.format) ?? "-",
                s.flatMap { s in q.map { Self.format(ratio(s, $0)) } } ?? "-",
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
        var better: GraphMetric.Better
        var strata: Double?
        var sqlite: Double?
        var ratio: Double?
    }

    private struct JSONReport: Encodable {
        var benchmark = "strata-graph-bench"
        var api = "object graph: PersistentContainer, background contexts, ManagedObject subclasses vs GRDB records"
        var rows: Int
        var departments: Int
        var seed: UInt64
        var durability: String
        var strataPropertyAccess: String
        var build: String
        var sqliteVersion: String
        var sqliteSettings: String
        var figures: [JSONFigure]
        var details: [String: [String: Double]]
        var checksums: [String: [String: Int64]]
    }

    func json(pretty: Bool) throws -> String {
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        let figures = GraphMetric.allCases.compactMap { metric -> JSONFigure? in
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
            rows: rows, departments: departments, seed: seed, durability: durability.rawValue,
            strataPropertyAccess: access.rawValue, build: build,
            sqliteVersion: sqliteVersion,
            sqliteSettings: "GRDB 7.10 records on a DatabaseQueue, journal_mode=WAL, synchronous="
                + (durability == .durable ? "FULL" : "OFF"),
            figures: figures,
            details: ["Strata": strata.details.filter { $0.value.isFinite },
                      "SQLite": sqlite.details.filter { $0.value.isFinite }],
            checksums: ["Strata": strata.checksums, "SQLite": sqlite.checksums])
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
