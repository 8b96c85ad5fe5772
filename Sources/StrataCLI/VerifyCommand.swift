import ArgumentParser
import Foundation
import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata verify PATH [--json]`: checks every checksum, block, row and index of a store.
struct VerifyCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every checksum, block, row and index of a store.",
        discussion: """
            Reads the store without opening anything for writing and without its lock, and changes \
            nothing. Prints each problem with its file and byte offset. Exits with status 0 when the \
            store is sound and 1 when a problem was found or the store could not be read. Shows \
            progress on standard error when it is a terminal. With --json, prints the report as one \
            JSON object.
            """)

    @OptionGroup var store: StoreArguments

    @Flag(help: "Print the report as one JSON object instead of text.")
    var json = false

    func run() throws {
        let progress = isatty(STDERR_FILENO) == 1 ? ProgressLine() : nil
        let report = try Store.verify(
            at: store.url, progress: progress.map { line in { line.show(done: $0, total: $1) } })
        progress?.clear()
        if json {
            try Output.json(report)
        } else {
            print(Self.text(report))
        }
        if !report.isClean { throw ExitCode.failure }
    }

    /// The report as text: what was checked, what was skipped, then each problem.
    static func text(_ report: VerificationReport) -> String {
        var checked = [
            "\(report.segmentsChecked) segments (\(report.bytesChecked) bytes)", "\(report.recordsChecked) records",
            "\(report.blocksChecked) blocks", "\(report.rowsChecked) rows",
        ]
        if report.checkpointChecked { checked.append("the checkpoint") }
        var lines = ["Checked \(report.path): " + checked.joined(separator: ", ") + "."]
        lines += report.skippedChecks.map { "Skipped \($0)." }
        if report.isClean {
            lines.append("No problems found.")
        } else {
            lines.append("\(report.problems.count) \(report.problems.count == 1 ? "problem" : "problems"):")
            lines += report.problems.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

/// A percentage on one line of standard error, rewritten in place.
final class ProgressLine {
    private var shown = -1

    /// Shows how far verification got, when the whole percentage changed.
    func show(done: Int64, total: Int64) {
        let percent = total > 0 ? Int(done * 100 / total) : 100
        guard percent != shown else { return }
        shown = percent
        Output.status("\rverifying: \(percent)%")
    }

    /// Erases the line.
    func clear() {
        if shown >= 0 { Output.status("\r\u{1B}[K") }
    }
}
