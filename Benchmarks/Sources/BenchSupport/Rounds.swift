import Foundation

/// The engines of a benchmark: Strata, and the baselines it is measured against. The raw value
/// is the engine's name in the report; its lowercase form names the engine in the JSON object
/// (`sqlite`, `sqliteRounds`) and on the command line.
public protocol BenchEngineID: RawRepresentable<String>, CaseIterable, Hashable, Sendable where AllCases == [Self] {
    /// Strata, whose figures every baseline's are compared with.
    static var strata: Self { get }
    /// SQLite, the first baseline: its figures sit beside Strata's under the plain figure ids
    /// (`W1`), with the ratio Strata/SQLite. Every other baseline's figures have ids of their own
    /// (`W1.rocksdb`).
    static var sqlite: Self { get }
}

extension BenchEngineID {
    /// The engine's name in the JSON object and on the command line: the raw value, lowercased.
    public var slug: String { rawValue.lowercased() }
}

/// The two engines strata-graph-bench compares.
public enum EngineID: String, BenchEngineID {
    /// Strata (the engine, or its object graph).
    case strata = "Strata"
    /// SQLite through GRDB.
    case sqlite = "SQLite"
}

/// How the rounds of a figure make the figure.
public enum RoundSummary: String, Codable, Sendable {
    /// The median of the rounds: timings and rates.
    case median
    /// The largest round: peak memory, where the worst round is what a user must provision for.
    case maximum
}

/// One engine's rounds of one figure, in the order they ran, and what they sum up to.
public struct FigureRounds: Sendable {
    /// A figure whose rounds spread more than this (largest over smallest) is flagged.
    public static let flaggedSpread = 2.0

    /// Each round's value, in the order the rounds ran (non-finite values included).
    public var values: [Double]
    /// How ``value`` is made from the rounds.
    public var summary: RoundSummary

    /// Creates the rounds of a figure summed up by `summary`.
    public init(_ values: [Double] = [], summary: RoundSummary) {
        self.values = values
        self.summary = summary
    }

    /// The finite values: a round that measured nothing (a percentile of no reads) does not count.
    private var finite: [Double] { values.filter(\.isFinite) }

    /// The figure: the median of the finite rounds (their maximum for ``RoundSummary/maximum``);
    /// `nil` when no round measured a finite value.
    public var value: Double? {
        switch summary {
        case .median: finite.median
        case .maximum: finite.max()
        }
    }

    /// The smallest finite round.
    public var min: Double? { finite.min() }
    /// The largest finite round.
    public var max: Double? { finite.max() }

    /// The largest round over the smallest (1 when they agree); `nil` with fewer than two finite
    /// rounds, or when the smallest is not positive, where the quotient says nothing.
    public var spread: Double? {
        guard finite.count >= 2, let min, let max, min > 0 else { return nil }
        return max / min
    }

    /// Whether the rounds spread more than ``flaggedSpread``: one machine state decided part of
    /// them, and the figure should be measured again before anyone relies on it.
    public var isFlagged: Bool { (spread ?? 1) > Self.flaggedSpread }
}

/// What one engine measured over all rounds: every figure's and every detail's value in each
/// round, and the checksums of its last round.
public struct EngineRounds<Metric: BenchMetric>: Sendable {
    /// Each figure's rounds.
    public private(set) var figures: [Metric: FigureRounds] = [:]
    /// Each detail's rounds, in the order they ran.
    public private(set) var details: [String: [Double]] = [:]
    /// The checksums of the last round (every round's were checked against the other engine's).
    public private(set) var checksums: [String: Int64] = [:]

    /// Creates an engine's results before its first round.
    public init() {}

    /// Adds what one round measured.
    public mutating func add(_ round: EngineResults<Metric>) {
        for (metric, value) in round.figures {
            figures[metric, default: FigureRounds(summary: metric.summary)].values.append(value)
        }
        for (name, value) in round.details {
            details[name, default: []].append(value)
        }
        checksums.merge(round.checksums) { _, last in last }
    }

    /// Replaces the rounds of `metric` with `values` (measured elsewhere, e.g. in a child process).
    public mutating func replace(_ metric: Metric, with values: [Double]) {
        figures[metric] = FigureRounds(values, summary: metric.summary)
    }

    /// Sets the detail `name` to `value`, as if every round had measured it.
    public mutating func setDetail(_ name: String, to value: Double?) {
        details[name] = value.map { [$0] }
    }

    /// Each detail's median over the rounds that measured it (finite values only).
    public var detailMedians: [String: Double] {
        details.compactMapValues { $0.filter(\.isFinite).median }
    }
}

/// Strata and SQLite's rounds of every workload of a run: the rounds of the two engines of
/// ``EngineID``.
public typealias SideBySideRounds<Metric: BenchMetric> = ComparedRounds<Metric, EngineID>

/// Every engine's rounds of every workload of a run, and the loop that runs them.
///
/// Every workload runs ``rounds`` rounds for each engine, the engines alternating round by round
/// (Strata, SQLite, Strata, SQLite, …), so that a slow period of the machine (a neighbour's
/// build, writeback, a throttled disk) falls on every engine instead of deciding one figure.
/// Each figure is then the median of its rounds (``FigureRounds``), the ratio the ratio of the
/// medians, and a figure whose rounds spread more than 2× is flagged in the report.
public struct ComparedRounds<Metric: BenchMetric, Engine: BenchEngineID>: Sendable {
    /// The rounds each workload runs for each engine.
    public let rounds: Int
    /// The engines that run, in the order each round runs them (the order of `Engine.allCases`).
    public let engines: [Engine]
    /// Each engine's rounds.
    private var byEngine: [Engine: EngineRounds<Metric>] = [:]

    /// Creates the results of a run of `rounds` rounds (at least 1) of `engines`.
    public init(rounds: Int, engines: [Engine] = Engine.allCases) {
        precondition(rounds >= 1, "a figure needs at least one round")
        self.rounds = rounds
        self.engines = Engine.allCases.filter(engines.contains)
    }

    /// The rounds of `engine` (none for an engine that did not run).
    public subscript(engine: Engine) -> EngineRounds<Metric> {
        get { byEngine[engine] ?? EngineRounds() }
        set { byEngine[engine] = newValue }
    }

    /// Strata's rounds.
    public var strata: EngineRounds<Metric> {
        get { self[.strata] }
        set { self[.strata] = newValue }
    }

    /// SQLite's rounds.
    public var sqlite: EngineRounds<Metric> {
        get { self[.sqlite] }
        set { self[.sqlite] = newValue }
    }

    /// Runs ``rounds`` rounds of `workload`: in each, `body` once for each engine, in the order of
    /// ``engines``, into results of its own. After each round, every engine's checksums must
    /// agree with those of the first engine that ran it (Strata's).
    ///
    /// - Parameters:
    ///   - workload: The workload's name, for the progress and the errors.
    ///   - only: The engines that run this workload, when not all of ``engines`` do (a workload
    ///     a baseline has no way to run, such as a query on an index a key-value store lacks).
    ///   - body: Measures one round of `engine` (counted from 0) and records its figures,
    ///     details and checksums in `results`. A workload that needs a fresh store sets it up
    ///     here; one that reads a store loaded once keeps that store outside.
    /// - Throws: What `body` throws, or a ``BenchError`` when the engines' checksums disagree.
    public mutating func alternate(
        _ workload: String, only: [Engine]? = nil,
        _ body: (_ engine: Engine, _ round: Int, _ results: inout EngineResults<Metric>) throws -> Void
    ) throws {
        let running = engines.filter { only?.contains($0) ?? true }
        for round in 0..<rounds {
            WorkloadSteps.log("\(workload): round \(round + 1) of \(rounds)")
            var measured: [(Engine, EngineResults<Metric>)] = []
            for engine in running {
                var results = EngineResults<Metric>()
                try body(engine, round, &results)
                self[engine].add(results)
                measured.append((engine, results))
            }
            guard let (reference, expected) = measured.first else { continue }
            for (engine, results) in measured.dropFirst() {
                do {
                    try expected.checkChecksums(agreeWith: results, names: (reference.rawValue, engine.rawValue))
                } catch {
                    throw BenchError("\(workload), round \(round + 1): \(error)")
                }
            }
        }
    }
}
