import BenchSupport
import Foundation

extension GraphBench {
    /// W6's peak memory of each engine measured in a process of its own: this tool run again
    /// with `--only` that engine, `--workloads W6` and the same `--rounds`, so that no heap the
    /// other engine left behind hides or inflates the figure. Replaces the in-process
    /// `W6.peakMemory` rounds of each engine (whose largest is kept as the `W6.inProcessGrowthMB`
    /// detail) with the child run's rounds, and its W6 memory details.
    func isolateW6Memory(into results: inout SideBySideRounds<GraphMetric>) throws {
        let metric = GraphMetric.fullScanPeakMemory
        for engine in results.engines {
            let option = engine.rawValue.lowercased()
            BenchCommand.progress("strata-graph-bench", "W6 peak memory of \(engine.rawValue) in a process of its own")
            var arguments = [
                "--rows", String(rows), "--durability", durability, "--access", access, "--predicate", predicate,
                "--workloads", "W6", "--only", option, "--rounds", String(rounds.rounds),
            ]
            if let dir = output.dir { arguments += ["--dir", dir] }
            let child = try Self.runChild(arguments)
            let figures = child["figures"] as? [[String: Any]] ?? []
            let figure = figures.first { $0["id"] as? String == metric.rawValue }
            let values = (figure?["\(option)Rounds"] as? [String: Any])?["rounds"] as? [Any]
            guard let values, !values.isEmpty else {
                throw BenchError("the \(option) W6 run reported no rounds of \(metric.rawValue)")
            }
            let details = (child["details"] as? [String: [String: Double]])?[engine.rawValue] ?? [:]
            results[engine].setDetail("W6.inProcessGrowthMB", to: results[engine].figures[metric]?.max)
            results[engine].replace(metric, with: values.map { $0 as? Double ?? .nan })
            for (detail, value) in details
            where (detail.hasPrefix("W6.") && detail.hasSuffix("MB")) || detail == "W6.peakWasReset" {
                results[engine].setDetail(detail, to: value)
            }
        }
    }

    /// Runs this executable with `arguments`; returns the JSON object it printed last.
    private static func runChild(_ arguments: [String]) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "strata-graph-bench \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        guard let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw BenchError("strata-graph-bench \(arguments.joined(separator: " ")) printed no JSON object") }
        return object
    }
}
