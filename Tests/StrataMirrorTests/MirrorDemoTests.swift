import Foundation
import StrataTestSupport
import Testing

/// `make mirror-demo`: the demo program (built with the tests) run as a user runs it.
@Suite(
    "Mirror demo", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorDemoTests {
    @Test(
        "the stores converge, the restarted instance's saves included, however early the others finished",
        arguments: ["asynchronous", "synchronous"])
    func demoConverges(mode: String) throws {
        let saves = 20
        // The demo program beside the test program (`swift build --build-tests` builds both).
        let demo = try BuiltExecutable.url(named: "strata-mirror-demo")
        let directory = TemporaryDirectory()
        let output = directory.url.appendingPathComponent("demo.out")
        let status = try spawnAndWait(
            "/bin/sh", ["-c", "exec \"$0\" \(saves) \(mode) >\"$1\" 2>&1", demo.path, output.path])
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(status == 0, "\(lines.joined(separator: "\n"))")

        // Every item is one save: alpha's and charlie's, bravo's before the kill (at least half)
        // and the half it saves after its restart.
        let held = lines.first { $0.hasPrefix("mirror-demo: each store holds ") }
        let items = held.flatMap { Int($0.split(separator: " ")[4]) } ?? 0
        #expect(items >= 2 * saves + saves / 2 + 1 + saves / 2)
        #expect(lines.dropLast().last == "mirror-demo: \(mode) mode")
        #expect(lines.last?.hasPrefix("mirror: \(items) transactions, 3 instances, lag p50 ") == true)
        #expect(lines.last?.hasSuffix("identical: yes") == true, "\(lines.joined(separator: "\n"))")
    }
}
