import BenchSupport
import Foundation

extension GraphBench {
    /// W6's peak memory of each engine measured in a process of its own: this tool run again
    /// with `--only` that engine and `--workloads W6` (plus W1, which loads the data), so that no
    /// heap the other engine left behind hides or inflates the figure. Replaces the in-process
    /// `W6.peakMemory` figures of `strata` and `sqlite` (kept as the `W6.inProcessGrowthMB`
    /// detail) with the child runs' figures and details.
    func isolateW6Memory(strata: inout EngineResults<GraphMetric>, sqlite: inout EngineResults<GraphMetric>) throws {
        for engine in ["strata", "sqlite"] {
            BenchCommand.progress("strata-graph-bench", "W6 peak memory of \(engine) in a process of its own")
            var arguments = [
                "--rows", String(rows), "--durability", durability, "--access", access, "--predicate", predicate,
                "--workloads", "W6", "--only", engine,
            ]
            if let dir = output.dir { arguments += ["--dir", dir] }
            let child = try Self.runChild(arguments)
            let key = engine == "strata" ? "Strata" : "SQLite"
            let figures = child["figures"] as? [[String: Any]] ?? []
            let figure = figures.first { $0["id"] as? String == GraphMetric.fullScanPeakMemory.rawValue }?[engine] as? Double
            let details = (child["details"] as? [String: [String: Double]])?[key] ?? [:]
            guard let figure else { throw BenchError("the \(engine) W6 run reported no \(GraphMetric.fullScanPeakMemory.rawValue)") }
            func update(_ results: inout EngineResults<GraphMetric>) {
                results.details["W6.inProcessGrowthMB"] = results.figures[.fullScanPeakMemory]
                results.figures[.fullScanPeakMemory] = figure
                for (name, value) in details where (name.hasPrefix("W6.") && name.hasSuffix("MB")) || name == "W6.peakWasReset" {
                    results.details[name] = value
                }
            }
            if engine == "strata" { update(&strata) } else { update(&sqlite) }
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
            throw BenchError("strata-graph-bench \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        guard let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw BenchError("strata-graph-bench \(arguments.joined(separator: " ")) printed no JSON object") }
        return object
    }
}
