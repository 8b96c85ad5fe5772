import Foundation

/// A `strata-service` process on the loopback address, over one backend and one directory:
/// started, waited for until it listens, sampled for its resident memory, and stopped with
/// SIGTERM or killed with SIGKILL.
final class ServerProcess {
    /// The service's executable.
    let executable: URL
    /// `strata` or `grdb`.
    let backend: String
    /// The directory holding the store, kept across restarts.
    let directory: URL
    /// The port; the first start picks a free one and every restart listens on it again.
    private(set) var port: Int?
    /// The running process, if any.
    private var process: Process?

    /// How long a start may take: an open after a kill recovers the store first.
    static let startTimeout: Double = 120

    /// A server of `backend` over `directory`, not started.
    init(executable: URL, backend: String, directory: URL) {
        self.executable = executable
        self.backend = backend
        self.directory = directory
    }

    /// `http://127.0.0.1:<port>`, once started.
    var baseURL: String {
        "http://127.0.0.1:\(port ?? 0)"
    }

    /// The process ID of the running server.
    var pid: Int32? { process?.processIdentifier }

    /// Starts the server and returns once it listens; its log goes to `<directory>.log`.
    ///
    /// - Throws: ``LoadError`` when it exits or does not listen within ``startTimeout`` seconds.
    func start() throws {
        let log = directory.appendingPathExtension("log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw LoadError("cannot create the log \(log.path)")
        }
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--backend", backend, "--host", "127.0.0.1", "--port", String(port ?? 0),
            "--directory", directory.path, "--log-level", "notice",
        ]
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        try? handle.close()
        self.process = process
        let deadline = Date().addingTimeInterval(Self.startTimeout)
        while Date() < deadline {
            if let listening = Self.listeningPort(inLog: log) {
                port = listening
                return
            }
            guard process.isRunning else {
                throw LoadError("strata-service --backend \(backend) exited at start: \(Self.tail(of: log))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill()
        throw LoadError("strata-service --backend \(backend) did not listen within \(Int(Self.startTimeout)) s")
    }

    /// Stops the server with SIGTERM (a graceful shutdown) and waits for it to exit.
    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    /// Kills the server with SIGKILL and waits for it to exit.
    func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// The server's resident memory in bytes (`VmRSS` of `/proc/<pid>/status`), or `nil`
    /// when it is not running or the system has no `/proc`.
    static func residentBytes(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 2 ? Int(fields[1]).map { $0 * 1024 } : nil
        }
        return nil
    }

    /// The port of the `address=http://127.0.0.1:<port>` the service logs once it listens.
    private static func listeningPort(inLog log: URL) -> Int? {
        guard let text = try? String(contentsOf: log, encoding: .utf8),
            let range = text.range(of: "address=http://127.0.0.1:")
        else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The last lines of the log, for an error.
    private static func tail(of log: URL) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }
}

/// What went wrong in a load run, as a message.
struct LoadError: Error, CustomStringConvertible {
    /// The message.
    let description: String

    /// An error saying `description`.
    init(_ description: String) { self.description = description }
}
