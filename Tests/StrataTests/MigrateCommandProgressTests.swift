import Foundation
import Strata
import StrataStore
import StrataTestSupport
import Testing

/// `strata migrate`'s progress: a rewrite in place prints one line per segment of the log it
/// rewrote, after what changes and how; `--dry-run` prints the same report and nothing else.
@Suite struct MigrateCommandProgressTests {
    @Test func aRewriteInPlacePrintsALinePerSegment() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels(
            [MigrationCrashTests.version1, MigrationCrashTests.version2], in: directory)
        let (url, _) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<500).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                return item
            }
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").filter {
            $0.hasSuffix(".log")
        }.count
        #expect(segments >= 1)
        let strata = try BuiltExecutable.url(named: "strata").path

        let (dryEnd, dryOutput) = try ChildProcess.run(
            strata, ["migrate", url.path, "--model", models[1].path, "--dry-run"],
            stderrPath: directory.path + "/dry.err")
        #expect(dryEnd == .exited(0))
        #expect(!dryOutput.contains("Rewrote"), "a dry run rewrites nothing: \(dryOutput)")

        let (end, output) = try ChildProcess.run(
            strata, ["migrate", url.path, "--model", models[1].path], stderrPath: directory.path + "/run.err")
        #expect(end == .exited(0), "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        let progress = lines.filter { $0.hasPrefix("Rewrote segment ") }
        #expect(progress.count == segments, "\(output)")
        for (index, line) in progress.enumerated() {
            #expect(line.hasPrefix("Rewrote segment \(index + 1) of \(segments): "), "\(line)")
            #expect(line.hasSuffix(" bytes written"), "\(line)")
        }
        #expect(progress.last?.contains(" rows,") == true)
        // The report before the progress is the dry run's, word for word; the summary comes last.
        let report = Array(lines.prefix { !$0.hasPrefix("Rewrote segment ") })
        #expect(report == dryOutput.split(separator: "\n").map(String.init))
        #expect(lines.last?.hasPrefix("Migrated in ") == true, "\(output)")
        #expect(
            lines.firstIndex { $0.hasPrefix("Migrated in ") }! > lines.lastIndex { $0.hasPrefix("Rewrote segment ") }!)
    }
}
