import ArgumentParser
import Foundation
import StrataStore

/// `strata compact PATH [--json]`: rewrites the segments that hold dead rows.
struct CompactCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the segments that hold dead rows, reclaiming their space.",
        discussion: """
            Opens the store for writing, so no other process may have it open for writing. Retained \
            history is copied forward; delete history with the library to reclaim it. With --json, \
            prints the report as one JSON object.
            """)

    @OptionGroup var store: StoreArguments

    @Flag(help: "Print the report as one JSON object instead of text.")
    var json = false

    func run() throws {
        let opened = try store.openForWriting()
        let report: CompactionReport
        do {
            report = try opened.compact()
        } catch {
            try? opened.close()
            throw error
        }
        try opened.close()
        if json {
            try Output.json(report)
        } else {
            print(Self.text(report, path: opened.path))
        }
    }

    /// The report as text.
    static func text(_ report: CompactionReport, path: String) -> String {
        let segments = "\(report.segmentsCompacted) \(report.segmentsCompacted == 1 ? "segment" : "segments")"
        return [
            report.segmentsCompacted == 0
                ? "Nothing to compact in \(path): no sealed segment holds dead rows."
                : "Compacted \(path): \(segments) rewritten.",
            "  bytes before  \(report.bytesBefore)",
            "  bytes after   \(report.bytesAfter)",
            "  reclaimed     \(max(0, report.bytesBefore - report.bytesAfter))",
            "  read \(report.bytesRead) bytes, wrote \(report.bytesWritten) bytes",
        ].joined(separator: "\n")
    }
}
