import Foundation

/// Which way a figure is better.
public enum Better: String, Codable, Sendable { case higher, lower }

/// One figure of a report, measured for each engine: an enum whose raw value is the figure's id
/// in the JSON object.
///
/// Every benchmark reports W1, W3, W4, W5 and W6, which the shared steps of ``WorkloadSteps``
/// record.
public protocol BenchMetric: RawRepresentable<String>, CaseIterable, Hashable, Sendable {
    /// The figure's name in the table and the JSON object.
    var title: String { get }
    /// The figure's unit.
    var unit: String { get }
    /// Which way is better.
    var better: Better { get }
    /// How the figure is made from its rounds. The default is ``RoundSummary/median``.
    var summary: RoundSummary { get }

    /// W1, bulk insert.
    static var bulkInsert: Self { get }
    /// W3, cold open.
    static var coldOpen: Self { get }
    /// W4, random faults.
    static var randomFaults: Self { get }
    /// W5, the predicate fetch: top earners sorted and limited.
    static var predicateFetch: Self { get }
    /// W5, the same predicate counted.
    static var predicateCount: Self { get }
    /// W6, full scan (or fetch) reading notes.
    static var fullScan: Self { get }
}

extension BenchMetric {
    public var summary: RoundSummary { .median }
}

/// What one engine measured in one round: the figures, details behind them, and checksums both
/// engines must share. ``SideBySideRounds`` gathers the rounds.
public struct EngineResults<Metric: BenchMetric>: Sendable {
    /// Each figure's value in this round.
    public var figures: [Metric: Double] = [:]
    /// What lies behind the figures (seconds, latencies, bytes), by name.
    public var details: [String: Double] = [:]
    /// Values the other engine must have measured too, by name.
    public var checksums: [String: Int64] = [:]

    /// Creates the empty results of a round.
    public init() {}

    /// Throws when a checksum of either engine is missing from, or different in, the other.
    public func checkChecksums(agreeWith sqlite: EngineResults) throws {
        try checkChecksums(agreeWith: sqlite, names: ("Strata", "SQLite"))
    }

    /// Throws when a checksum of either engine is missing from, or different in, the other;
    /// `names` are this engine's and the other's, for the error.
    public func checkChecksums(agreeWith other: EngineResults, names: (String, String)) throws {
        for name in Set(checksums.keys).union(other.checksums.keys).sorted()
        where checksums[name] != other.checksums[name] {
            throw BenchError(
                "the engines disagree on \(name): \(names.0) \(checksums[name].map(String.init) ?? "nil"), "
                    + "\(names.1) \(other.checksums[name].map(String.init) ?? "nil")")
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

/// `lines` as a plain-text table: the first line is the header, underlined; each column as wide
/// as its widest cell, its cells right-aligned unless its index is in `leftAligned`.
public func formatTable(_ lines: [[String]], leftAligned: Set<Int>) -> String {
    let columns = lines.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in lines.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    var out = ""
    for (number, line) in lines.enumerated() {
        let cells = line.enumerated().map { column, cell in
            leftAligned.contains(column)
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

/// Strata and SQLite's report: the report of the two engines of ``EngineID``.
public typealias SideBySideReport<Metric: BenchMetric> = ComparedReport<Metric, EngineID>

/// The side-by-side report: a table for people and one JSON object for tools.
///
/// Each figure is the summary of its rounds (``FigureRounds/value``: the median, the maximum for
/// peak memory), shown with the smallest and largest round; the ratio is Strata's figure over
/// SQLite's; a figure whose rounds spread more than 2× for either engine is flagged. Every other
/// baseline that ran (RocksDB, LMDB) gets columns of its own and, in the JSON object, figures of
/// its own (`W1.rocksdb`), whose ratio is oriented so that above 1 is Strata ahead.
public struct ComparedReport<Metric: BenchMetric, Engine: BenchEngineID> {
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
    /// Every engine's rounds.
    public var results: ComparedRounds<Metric, Engine>

    public init(
        benchmark: String, labels: [String: String] = [:], rows: Int, departments: Int, seed: UInt64,
        sqliteVersion: String, sqliteSettings: String, results: ComparedRounds<Metric, Engine>
    ) {
        self.benchmark = benchmark
        self.labels = labels
        self.rows = rows
        self.departments = departments
        self.seed = seed
        self.sqliteVersion = sqliteVersion
        self.sqliteSettings = sqliteSettings
        self.results = results
    }

    /// The baselines besides SQLite that ran, each with columns and figures of its own.
    private var otherBaselines: [Engine] {
        results.engines.filter { $0 != .strata && $0 != .sqlite }
    }

    /// Prints `headline`, the table, its legend, `notes` and the JSON object to standard output,
    /// and writes the JSON object (pretty) to `jsonPath` too when it is given.
    public func print(headline: String, notes: String, jsonPath: String?) throws {
        Swift.print(headline)
        Swift.print(table())
        Swift.print(legend)
        Swift.print(notes)
        if let jsonPath {
            try Data((try json(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: jsonPath))
        }
        Swift.print(try json(pretty: false))
    }

    /// What the table's columns mean.
    public var legend: String {
        let alternation = results.engines.count > 1 ? ", the engines alternating round by round" : ""
        let limit = formatFigure(FigureRounds.flaggedSpread)
        let others = otherBaselines.map(\.rawValue)
        let baselines =
            others.isEmpty
            ? ""
            : """

                Strata vs \(others.joined(separator: ", vs ")): Strata's figure over the baseline's where higher is better, \
                the baseline's over Strata's where lower is better,
                so that above 1 is always Strata ahead (the JSON figures \(others.map { "W1.\($0.lowercased())" }.joined(separator: ", ")), …).
                """
        return """
            Each figure is the median of \(results.rounds) round(s) per engine\(alternation)
            (peak memory: the largest round); min–max: its smallest and largest rounds; Strata/SQLite: the ratio
            of the figures; spread: the largest engine's max/min; ! marks a spread above \(limit)x (measure it again).\(baselines)

            """
    }

    /// One line a figure any engine measured ("-" for an engine that did not).
    public func table() -> String {
        let others = otherBaselines
        var header = ["workload", "unit", "Strata", "min–max", "SQLite", "min–max", "Strata/SQLite"]
        for baseline in others {
            header += [baseline.rawValue, "min–max", "Strata vs \(baseline.rawValue)"]
        }
        header += ["spread", "better"]
        let leftAligned: Set = [0, 1, header.count - 1]
        var lines: [[String]] = [header]
        for metric in Metric.allCases {
            let s = results.strata.figures[metric]
            let q = results.sqlite.figures[metric]
            let o = others.map { results[$0].figures[metric] }
            guard s != nil || q != nil || o.contains(where: { $0 != nil }) else { continue }
            let all = [s, q] + o
            let spread = all.compactMap { $0?.spread }.max()
            let flagged = all.contains { $0?.isFlagged == true }
            var line = [
                metric.title, metric.unit,
                s?.value.map(formatFigure) ?? "-", Self.range(s),
                q?.value.map(formatFigure) ?? "-", Self.range(q),
                Self.ratio(s, q).map(formatFigure) ?? "-",
            ]
            for baseline in o {
                line += [
                    baseline?.value.map(formatFigure) ?? "-", Self.range(baseline),
                    Self.advantage(s, over: baseline, better: metric.better).map(formatFigure) ?? "-",
                ]
            }
            line += [
                spread.map { formatFigure($0) + "x" + (flagged ? " !" : "  ") } ?? "-",
                metric.better == .higher ? "higher (>1 = Strata ahead)" : "lower (<1 = Strata ahead)",
            ]
            lines.append(line)
        }
        return formatTable(lines, leftAligned: leftAligned)
    }

    /// The smallest and largest rounds, as the table shows them.
    private static func range(_ rounds: FigureRounds?) -> String {
        guard let min = rounds?.min, let max = rounds?.max else { return "-" }
        return "\(formatFigure(min))–\(formatFigure(max))"
    }

    /// Strata's figure over SQLite's; `nil` unless both are finite and SQLite's is not 0.
    private static func ratio(_ strata: FigureRounds?, _ sqlite: FigureRounds?) -> Double? {
        guard let s = strata?.value, let q = sqlite?.value, q != 0 else { return nil }
        let ratio = s / q
        return ratio.isFinite ? ratio : nil
    }

    /// How far Strata is ahead of `baseline`, above 1 when it is: Strata's figure over the
    /// baseline's when higher is better, the baseline's over Strata's when lower is better.
    private static func advantage(_ strata: FigureRounds?, over baseline: FigureRounds?, better: Better) -> Double? {
        better == .higher ? ratio(strata, baseline) : ratio(baseline, strata)
    }

    /// The larger of the two engines' spreads.
    private static func spread(_ strata: FigureRounds?, _ sqlite: FigureRounds?) -> Double? {
        [strata?.spread, sqlite?.spread].compactMap { $0 }.max()
    }

    /// Whether either engine's rounds spread more than 2×.
    private static func isFlagged(_ strata: FigureRounds?, _ sqlite: FigureRounds?) -> Bool {
        strata?.isFlagged == true || sqlite?.isFlagged == true
    }

    /// One engine's rounds of a figure in the JSON object.
    private struct JSONRounds: Encodable {
        /// How the figure is made from the rounds: `median` or `maximum`.
        var summary: RoundSummary
        var min: Double?
        var max: Double?
        /// Every round's value, in the order they ran (`null` for a round that measured nothing).
        var rounds: [Double?]
        var spread: Double?
        var flagged: Bool

        init(_ rounds: FigureRounds) {
            summary = rounds.summary
            min = rounds.min
            max = rounds.max
            self.rounds = rounds.values.map { $0.isFinite ? $0 : nil }
            spread = rounds.spread
            flagged = rounds.isFlagged
        }
    }

    /// One figure of the JSON object: Strata's beside one baseline's, under the keys named after
    /// the baseline (`sqlite` and `sqliteRounds`, `rocksdb` and `rocksdbRounds`).
    private struct JSONFigure: Encodable {
        var id: String
        var name: String
        var unit: String
        var better: Better
        /// The baseline's name in the keys of its figure and rounds.
        var baseline: String
        /// Whether the figure says which baseline it compares with, and how its ratio is made
        /// (every figure but SQLite's, whose shape predates the other baselines).
        var describesRatio: Bool
        var strata: Double?
        var baselineValue: Double?
        var ratio: Double?
        /// How `ratio` is made: `strata/rocksdb` or `rocksdb/strata`.
        var ratioOf: String
        var strataRounds: JSONRounds?
        var baselineRounds: JSONRounds?
        /// The larger of the two engines' spreads.
        var spread: Double?
        /// Whether either engine's rounds spread more than 2×.
        var flagged: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(id, forKey: JSONKey("id"))
            try container.encode(name, forKey: JSONKey("name"))
            try container.encode(unit, forKey: JSONKey("unit"))
            try container.encode(better, forKey: JSONKey("better"))
            if describesRatio {
                try container.encode(baseline, forKey: JSONKey("baseline"))
                try container.encode(ratioOf, forKey: JSONKey("ratioOf"))
            }
            try container.encodeIfPresent(strata, forKey: JSONKey("strata"))
            try container.encodeIfPresent(baselineValue, forKey: JSONKey(baseline))
            try container.encodeIfPresent(ratio, forKey: JSONKey("ratio"))
            try container.encodeIfPresent(strataRounds, forKey: JSONKey("strataRounds"))
            try container.encodeIfPresent(baselineRounds, forKey: JSONKey("\(baseline)Rounds"))
            try container.encodeIfPresent(spread, forKey: JSONKey("spread"))
            try container.encode(flagged, forKey: JSONKey("flagged"))
        }
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
        var rounds: Int
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
            try container.encode(rounds, forKey: JSONKey("rounds"))
            try container.encode(sqliteVersion, forKey: JSONKey("sqliteVersion"))
            try container.encode(sqliteSettings, forKey: JSONKey("sqliteSettings"))
            try container.encode(figures, forKey: JSONKey("figures"))
            try container.encode(details, forKey: JSONKey("details"))
            try container.encode(checksums, forKey: JSONKey("checksums"))
        }
    }

    /// The report as one JSON object, its keys sorted: `rounds` is the rounds each engine ran of
    /// each workload; each figure has the engines' figures (`strata`, `sqlite`), their `ratio`
    /// (Strata/SQLite), each engine's rounds (`strataRounds`, `sqliteRounds`: `min`, `max`, every
    /// round's value in `rounds`, `spread`, `flagged`), and the figure's `spread` and `flagged`.
    /// Every other baseline that ran adds a figure of its own for each metric, `id` suffixed with
    /// its name (`W1.rocksdb`), with `baseline`, `strata`, the baseline's figure and rounds under
    /// its name (`rocksdb`, `rocksdbRounds`), and a `ratio` above 1 when Strata is ahead (`ratioOf`
    /// says which way it divides). `details` are each detail's median over the rounds, by engine;
    /// `checksums` are the last round's.
    public func json(pretty: Bool) throws -> String {
        var figures = Metric.allCases.compactMap { metric -> JSONFigure? in
            let s = results.strata.figures[metric]
            let q = results.sqlite.figures[metric]
            guard s != nil || q != nil else { return nil }
            return JSONFigure(
                id: metric.rawValue, name: metric.title, unit: metric.unit, better: metric.better,
                baseline: Engine.sqlite.slug, describesRatio: false,
                strata: s?.value, baselineValue: q?.value, ratio: Self.ratio(s, q), ratioOf: "",
                strataRounds: s.map(JSONRounds.init), baselineRounds: q.map(JSONRounds.init),
                spread: Self.spread(s, q), flagged: Self.isFlagged(s, q))
        }
        for baseline in otherBaselines {
            figures += Metric.allCases.compactMap { metric -> JSONFigure? in
                let s = results.strata.figures[metric]
                guard let b = results[baseline].figures[metric] else { return nil }
                return JSONFigure(
                    id: "\(metric.rawValue).\(baseline.slug)", name: "\(metric.title) vs \(baseline.rawValue)",
                    unit: metric.unit, better: metric.better, baseline: baseline.slug, describesRatio: true,
                    strata: s?.value, baselineValue: b.value,
                    ratio: Self.advantage(s, over: b, better: metric.better),
                    ratioOf: metric.better == .higher ? "strata/\(baseline.slug)" : "\(baseline.slug)/strata",
                    strataRounds: s.map(JSONRounds.init), baselineRounds: JSONRounds(b),
                    spread: Self.spread(s, b), flagged: Self.isFlagged(s, b))
            }
        }
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        let reported = Engine.allCases.filter { $0 == .strata || $0 == .sqlite || results.engines.contains($0) }
        let report = JSONReport(
            benchmark: benchmark, labels: labels, rows: rows, departments: departments, seed: seed, build: build,
            rounds: results.rounds, sqliteVersion: sqliteVersion, sqliteSettings: sqliteSettings, figures: figures,
            details: Dictionary(uniqueKeysWithValues: reported.map { ($0.rawValue, results[$0].detailMedians) }),
            checksums: Dictionary(uniqueKeysWithValues: reported.map { ($0.rawValue, results[$0].checksums) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
