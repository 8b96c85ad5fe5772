// The bench's writing instances: each is a process of its own (`strata-mirror-demo writer …`),
// as the demo's instances are, so 2 and 4 writers measure processes competing for PostgreSQL's
// head lock, not tasks of one process sharing its threads.
import Foundation
import Strata
import StrataMirror

/// One writing instance: opens its store, saves once to connect (and, asynchronously, lease
/// keys), says it is ready, waits for the go file, saves `saves` times, then waits until the
/// shared log holds `total` transactions (the asynchronous exports included) and writes its
/// start and end times (seconds since 1970) to `NAME.times`.
///
///     strata-mirror-demo writer NAME WORK SOCKET SAVES TOTAL MODE
func runWriter(_ arguments: [String]) async throws {
    let (name, work, socket, saves, total) = (
        arguments[0], arguments[1], arguments[2], Int(arguments[3])!, Int64(arguments[4])!
    )
    let mode: MirrorConfiguration.Mode = arguments[5] == "asynchronous" ? .asynchronous : .synchronous
    let instance = BenchInstance(name, work: work, socket: socket, mode: mode)
    try saveRetrying(instance.container) { context in
        EntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(
            "\(name)-warm-up", forKey: "name")
    }
    _ = FileManager.default.createFile(atPath: "\(work)/\(name).ready", contents: nil)
    while !FileManager.default.fileExists(atPath: "\(work)/go") { try await Task.sleep(for: .milliseconds(2)) }
    let start = Date().timeIntervalSince1970
    try await onThread {
        for save in 0..<saves {
            try saveRetrying(instance.container) { context in
                EntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(
                    "\(name)-\(save)", forKey: "name")
            }
        }
    }
    let deadline = ContinuousClock.now + .seconds(600)
    while try await logHead(socket: socket, database: "demo") < total {
        guard ContinuousClock.now < deadline else {
            throw CoreDataError(.coreData, "\(name): the log did not reach \(total) within 600 s")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    let end = Date().timeIntervalSince1970
    try "\(start) \(end)".write(toFile: "\(work)/\(name).times", atomically: true, encoding: .utf8)
    try await instance.close()
}

/// Runs `writers` writing processes of `perWriter` saves each over a fresh database; returns
/// the saves per second from the first start to the last end.
func throughput(
    writers: Int, perWriter: Int, mode: MirrorConfiguration.Mode, work: String, socket: String
) async throws -> Double {
    let names = (0..<writers).map { "w\($0)" }
    let total = Int64(writers * (perWriter + 1))  // each writer's warm-up save included
    let processes = try names.map { name in
        try spawn(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
            ["writer", name, work, socket, String(perWriter), String(total), "\(mode)"])
    }
    let deadline = ContinuousClock.now + .seconds(120)
    while names.contains(where: { !FileManager.default.fileExists(atPath: "\(work)/\($0).ready") }) {
        guard ContinuousClock.now < deadline else {
            for process in processes {
                kill(process, SIGKILL)
                _ = wait(for: process)
            }
            throw CoreDataError(.coreData, "the writing instances did not start within 120 s")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    _ = FileManager.default.createFile(atPath: "\(work)/go", contents: nil)
    for (name, process) in zip(names, processes) {
        let status = wait(for: process)
        guard status == 0 else { throw CoreDataError(.coreData, "writer \(name) exited with \(status)") }
    }
    let times = try names.map { name in
        try String(contentsOfFile: "\(work)/\(name).times", encoding: .utf8).split(separator: " ").map { Double($0)! }
    }
    let elapsed = times.map { $0[1] }.max()! - times.map { $0[0] }.min()!
    return Double(writers * perWriter) / elapsed
}
