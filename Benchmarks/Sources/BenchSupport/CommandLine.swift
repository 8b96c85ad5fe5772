import ArgumentParser
import Foundation

/// What the benchmark commands share: checking their options, the run's scratch directory, and
/// progress on standard error.
public enum BenchCommand {
    /// Throws unless `rows` (the `--rows` option) is at least 10.
    public static func validate(rows: Int) throws {
        guard rows >= 10 else { throw ValidationError("--rows must be at least 10") }
    }

    /// The workloads a comma-separated `--workloads` list names (case and spaces ignored); all of
    /// them when `list` is `nil`.
    public static func workloads<Workload>(_ list: String?) throws -> Set<Workload>
    where Workload: RawRepresentable<String> & CaseIterable & Hashable {
        guard let list else { return Set(Workload.allCases) }
        return try Set(
            list.split(separator: ",").map { name in
                let trimmed = name.trimmingCharacters(in: .whitespaces).uppercased()
                guard let workload = Workload(rawValue: trimmed) else {
                    throw ValidationError(
                        "unknown workload \(name); known: \(Workload.allCases.map(\.rawValue).joined(separator: ","))")
                }
                return workload
            })
    }

    /// Warns on standard error when this is a debug build.
    public static func warnIfDebugBuild() {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: a debug build; measure with -c release\n".utf8))
        #endif
    }

    /// Creates a fresh directory `<tool>-<UUID>` for the run's stores under `dir` (the `--dir`
    /// option), or under the system's temporary directory; the caller removes it.
    public static func makeRunDirectory(tool: String, under dir: String?) throws -> URL {
        let base = URL(fileURLWithPath: dir ?? NSTemporaryDirectory(), isDirectory: true)
        let root = base.appendingPathComponent("\(tool)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    /// Writes `<tool>: <message>` to standard error.
    public static func progress(_ tool: String, _ message: String) {
        FileHandle.standardError.write(Data("\(tool): \(message)\n".utf8))
    }
}

/// The `--rounds` option both benchmark commands take.
public struct RoundOptions: ParsableArguments {
    /// The `--rounds` default: 5.
    public static let defaultRounds = 5

    @Option(
        help: """
            Rounds of each workload for each engine, the engines alternating round by round; each figure \
            is the median of its rounds. At least 1; the default is 5.
            """)
    public var rounds: Int = RoundOptions.defaultRounds

    public init() {}

    public func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }
}

/// The options both benchmark commands end with: where else the JSON object goes, and where the
/// stores go.
public struct OutputOptions: ParsableArguments {
    @Option(help: "Also write the JSON object to this file.")
    public var json: String?

    @Option(help: "Where to create the temporary stores. The default is the system's temporary directory.")
    public var dir: String?

    public init() {}
}
