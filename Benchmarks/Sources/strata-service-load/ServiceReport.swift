import BenchSupport
import Foundation

/// The two backends `strata-service` runs on, in the order a round runs them.
enum ServiceBackend: String, CaseIterable, Sendable {
    case strata
    case grdb

    /// The name in the table.
    var title: String { self == .strata ? "Strata" : "GRDB" }
}

/// `make service-bench`'s report: each figure's rounds on both backends, as a table for people
/// and, as its last line, one JSON object in the shape `strata-graph-bench` prints.
struct ServiceReport {
    /// One figure on both backends.
    struct Figure {
        /// The JSON id: `S.95-5.c64.rps`.
        var id: String
        /// What it is, for the table.
        var name: String
        /// Its unit.
        var unit: String
        /// Which way is better.
        var better: Better
        /// Each backend's rounds.
        var rounds: [ServiceBackend: FigureRounds] = [:]

        /// Strata's advantage: Strata's figure over GRDB's where higher is better, GRDB's over
        /// Strata's where lower is better (above 1 is Strata ahead).
        var ratio: Double? {
            guard let strata = rounds[.strata]?.value, let grdb = rounds[.grdb]?.value else { return nil }
            let ratio = better == .higher ? strata / grdb : grdb / strata
            return ratio.isFinite ? ratio : nil
        }
    }

    /// The JSON object's top-level fields: what the run was.
    var employees: Int
    var seed: UInt64
    var rounds: Int
    var seconds: Double
    /// The figures, in the order they were first recorded.
    private(set) var figures: [Figure] = []

    /// A report of `rounds` rounds of `seconds` each over `employees` employees.
    init(employees: Int, seed: UInt64, rounds: Int, seconds: Double) {
        self.employees = employees
        self.seed = seed
        self.rounds = rounds
        self.seconds = seconds
    }

    /// Records one round of figure `id` on `backend`.
    mutating func record(
        _ id: String, _ name: String, unit: String, better: Better, backend: ServiceBackend, value: Double?,
        summary: RoundSummary = .median
    ) {
        let index =
            figures.firstIndex { $0.id == id }
            ?? {
                figures.append(Figure(id: id, name: name, unit: unit, better: better))
                return figures.count - 1
            }()
        figures[index].rounds[backend, default: FigureRounds(summary: summary)].values.append(value ?? .nan)
    }

    /// The table: each figure's median on both backends, their smallest and largest rounds,
    /// and Strata's advantage.
    func table() -> String {
        var lines = [["figure", "id", "unit", "Strata", "min–max", "GRDB", "min–max", "Strata vs GRDB"]]
        for figure in figures {
            let strata = figure.rounds[.strata]
            let grdb = figure.rounds[.grdb]
            lines.append([
                figure.name, figure.id, figure.unit,
                strata?.value.map(formatFigure) ?? "-", Self.range(strata),
                grdb?.value.map(formatFigure) ?? "-", Self.range(grdb),
                figure.ratio.map(formatFigure) ?? "-",
            ])
        }
        return formatTable(lines, leftAligned: [0, 1, 2])
            + """
            Medians of \(rounds) round(s) of \(formatFigure(seconds)) s per run, the backends alternating; peak memory is the
            largest round. Strata vs GRDB: above 1 is Strata ahead (Strata/GRDB where higher is better, GRDB/Strata where lower is).

            """
    }

    /// The smallest and largest rounds.
    private static func range(_ rounds: FigureRounds?) -> String {
        guard let min = rounds?.min, let max = rounds?.max else { return "-" }
        return "\(formatFigure(min))–\(formatFigure(max))"
    }

    /// The report as one JSON object: `benchmark`, the run's settings, and `figures`, each with
    /// `id`, `name`, `unit`, `better`, `baseline` (`grdb`), both backends' figures (`strata`,
    /// `grdb`), `ratio` (above 1 is Strata ahead; `ratioOf` says which way it divides), and each
    /// backend's rounds (`strataRounds`, `grdbRounds`).
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(JSONReport(self)), as: UTF8.self)
    }

    /// The JSON object.
    private struct JSONReport: Encodable {
        struct Rounds: Encodable {
            var summary: RoundSummary
            var min: Double?
            var max: Double?
            var rounds: [Double?]
        }
        struct JSONFigure: Encodable {
            var id: String
            var name: String
            var unit: String
            var better: Better
            var baseline = "grdb"
            var ratioOf: String
            var strata: Double?
            var grdb: Double?
            var ratio: Double?
            var strataRounds: Rounds?
            var grdbRounds: Rounds?
        }
        var benchmark = "strata-service-load"
        var employees: Int
        var seed: UInt64
        var rounds: Int
        var seconds: Double
        var figures: [JSONFigure]

        init(_ report: ServiceReport) {
            employees = report.employees
            seed = report.seed
            rounds = report.rounds
            seconds = report.seconds
            figures = report.figures.map { figure in
                func rounds(_ backend: ServiceBackend) -> Rounds? {
                    figure.rounds[backend].map {
                        Rounds(summary: $0.summary, min: $0.min, max: $0.max, rounds: $0.values.map { $0.isFinite ? $0 : nil })
                    }
                }
                return JSONFigure(
                    id: figure.id, name: figure.name, unit: figure.unit, better: figure.better,
                    ratioOf: figure.better == .higher ? "strata/grdb" : "grdb/strata",
                    strata: figure.rounds[.strata]?.value, grdb: figure.rounds[.grdb]?.value, ratio: figure.ratio,
                    strataRounds: rounds(.strata), grdbRounds: rounds(.grdb))
            }
        }
    }
}
