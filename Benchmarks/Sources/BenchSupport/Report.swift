import Foundation

/// Which way a figure is better.
public enum Better: String, Codable, Sendable { case higher, lower }

/// One figure of a report, measured for each engine: an enum whose raw value is the figure's id
/// in the JSON object.
///
/// Every benchmark reports W1, W4, W5 and W6, which the shared steps of ``WorkloadSteps`` record.
public protocol BenchMetric: RawRepresentable<String>, CaseIterable, Hashable, Sendable {
    /// The figure's name in the table and the JSON object.
    var title: String { get }
    /// The figure's unit.
    var unit: String { get }
    /// Which way is better.
    var better: Better { get }

    /// W1, bulk insert.
    static var bulkInsert: Self { get }
    /// W4, random faults.
    static var randomFaults: Self { get }
    /// W5, the predicate fetch: top earners sorted and limited.
    static var predicateFetch: Self { get }
    /// W5, the same predicate counted.
    static var predicateCount: Self { get }
    /// W6, full scan (or fetch) reading notes.
    static var fullScan: Self { get }
}

/// What one engine measured: the figures, details behind them, and checksums both must share.
public struct EngineResults<Metric: BenchMetric>: Sendable {
    public var figures: [Metric: Double] = [:]
    public var details: [String: Double] = [:]
    public var checksums: [String: Int64] = [:]

    public init() {}

    /// Throws when a checksum of either engine is missing from, or different in, the other.
    public func checkChecksums(agreeWith sqlite: EngineResults) throws {
        for name in Set(checksums.keys).union(sqlite.checksums.keys).sorted()
        where checksums[name] != sqlite.checksums[name] {
            throw BenchError(
                "the engines disagree on \(name): Strata \(checksums[name].map(String.init) ?? "nil"), "
                    + "SQLite \(sqlite.checksums[name].map(String.init) ?? "nil")")
        }
    }
}

/// Formats a figure for the table and the progress: thousands separators from 10,000 on, and
/// fewer decimals the larger the value.
public func formatFigure(_ value: Double) -> String {
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

/// The side-by-side report: a table for people and one JSON object for tools.
public struct SideBySideReport<Metric: BenchMetric> {
    /// The JSON object's `benchmark`: the name of the tool.
    public var benchmark: String
    /// More string fields at the top of the JSON object, by key.
    public var labels: [String: String]
    public var rows: Int
    public var departments: Int
    public var seed: UInt64
    public var sqliteVersion: String
    /// How SQLite was set up, for the JSON object.
    public var sqliteSettings: String
    public var strata: EngineResults<Metric>
    public var sqlite: EngineResults<Metric>

    public init(
        benchmark: String, labels: [String: String] = [:], rows: Int, departments: Int, seed: UInt64,
        sqliteVersion: String, sqliteSettings: String, strata: EngineResults<Metric>, sqlite: EngineResults<Metric>
    ) {
        self.benchmark = benchmark
        self.labels = labels
        self.rows = rows
        self.departments = departments
        self.seed = seed
        self.sqliteVersion = sqliteVersion
        self.sqliteSettings = sqliteSettings
        self.strata = strata
        self.sqlite = sqlite
    }

    /// Prints `headline`, the table, `notes` and the JSON object to standard output, and writes
    /// the JSON object (pretty) to `jsonPath` too when it is given.
    public func print(headline: String, notes: String, jsonPath: String?) throws {
        Swift.print(headline)
        Swift.print(table())
        Swift.print(notes)
        if let jsonPath {
            try Data((try json(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: jsonPath))
        }
        Swift.print(try json(pretty: false))
    }

    /// One line a figure either engine measured ("-" for the engine that did not).
    public func table() -> String {
        let header = ["workload", "unit", "Strata", "SQLite", "Strata/SQLite", "better"]
        var lines: [[String]] = [header]
        for metric in Metric.allCases {
            let s = strata.figures[metric]
            let q = sqlite.figures[metric]
            guard s != nil || q != nil else { continue }
            lines.append([
                metric.title, metric.unit, s.map(formatFigure) ?? "-", q.map(formatFigure) ?? "-",
                s.flatMap { s in q.map { formatFigure(ratio(s, $0)) } } ?? "-",
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

    private struct JSONFigure: Encodable {
        var id: String
        var name: String
        var unit: String
        var better: Better
        var strata: Double?
        var sqlite: Double?
        var ratio: Double?
    }

    private struct JSONKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ stringValue: String) { self.stringValue = stringValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct JSONReport: Encodable {
        var benchmark: String
        var labels: [String: String]
        var rows: Int
        var departments: Int
        var seed: UInt64
        var build: String
        var sqliteVersion: String
        var sqliteSettings: String
        var figures: [JSONFigure]
        var details: [String: [String: Double]]
        var checksums: [String: [String: Int64]]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(benchmark, forKey: JSONKey("benchmark"))
            for (key, value) in labels {
                try container.encode(value, forKey: JSONKey(key))
            }
            try container.encode(rows, forKey: JSONKey("rows"))
            try container.encode(departments, forKey: JSONKey("departments"))
            try container.encode(seed, forKey: JSONKey("seed"))
            try container.encode(build, forKey: JSONKey("build"))
            try container.encode(sqliteVersion, forKey: JSONKey("sqliteVersion"))
            try container.encode(sqliteSettings, forKey: JSONKey("sqliteSettings"))
            try container.encode(figures, forKey: JSONKey("figures"))
            try container.encode(details, forKey: JSONKey("details"))
            try container.encode(checksums, forKey: JSONKey("checksums"))
        }
    }

    /// The report as one JSON object, its keys sorted.
    public func json(pretty: Bool) throws -> String {
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
            benchmark: benchmark, labels: labels, rows: rows, departments: departments, seed: seed, build: build,
            sqliteVersion: sqliteVersion, sqliteSettings: sqliteSettings, figures: figures,
            details: ["Strata": strata.details.filter { $0.value.isFinite },
                      "SQLite": sqlite.details.filter { $0.value.isFinite }],
            checksums: ["Strata": strata.checksums, "SQLite": sqlite.checksums])
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
