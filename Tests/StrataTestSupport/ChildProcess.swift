import Dispatch
import Foundation
import StrataSynchronization
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, its stdout collected by a reader thread and its
/// stderr sent to a file.
package final class ChildProcess: Sendable {
    /// The child's process id.
    package let pid: pid_t
    /// Where its stderr goes.
    package let stderrPath: String
    private let output = Lock<[UInt8]>([])
    private let outputClosed = DispatchSemaphore(value: 0)
    private let reaped = Lock<ChildExit?>(nil)

    /// Starts `executable` with `arguments`.
    package init(_ executable: String, _ arguments: [String], stderrPath: String) throws {
        self.stderrPath = stderrPath
        var pipe: [Int32] = [-1, -1]
        // Close-on-exec, so that children spawned meanwhile by other tests do not hold the pipe open.
        guard Self.makePipe(&pipe) == 0 else { throw SpawnError(operation: "pipe", errno: errno) }
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] =
            ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(pipe[1])
        guard result == 0 else {
            close(pipe[0])
            throw SpawnError(operation: "posix_spawn \(executable)", errno: result)
        }
        self.pid = pid
        let readEnd = pipe[0]
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                output.withLock { $0.append(contentsOf: buffer[..<count]) }
            }
            close(readEnd)
            outputClosed.signal()
        }.start()
    }

    /// `pipe(2)`.
    private static func makePipe(_ fds: inout [Int32]) -> Int32 {
        #if canImport(Glibc)
        Glibc.pipe(&fds)
        #else
        Darwin.pipe(&fds)
        #endif
    }

    /// Runs `executable` to its end; returns how it ended and its stdout.
    package static func run(
        _ executable: String, _ arguments: [String], stderrPath: String
    ) throws -> (ChildExit, String) {
        let child = try ChildProcess(executable, arguments, stderrPath: stderrPath)
        let end = child.wait()
        return (end, child.outputText)
    }

    /// Sends SIGKILL, unless the child was already reaped (its pid may be reused).
    package func sigkill() {
        guard reaped.withLock({ $0 }) == nil else { return }
        #if canImport(Glibc)
        _ = Glibc.kill(pid, SIGKILL)
        #else
        _ = Darwin.kill(pid, SIGKILL)
        #endif
    }

    /// Reaps the child if it has ended; returns how it ended, or `nil` while it runs.
    package func poll() -> ChildExit? {
        reaped.withLock { reaped in
            if reaped == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    let signal = status & 0x7F
                    reaped = signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
                }
            }
            return reaped
        }
    }

    /// Waits for the child to end and for its stdout to close; returns how it ended.
    @discardableResult
    package func wait() -> ChildExit {
        while poll() == nil { usleep(200) }
        outputClosed.wait()
        outputClosed.signal()
        return poll()!
    }

    /// Everything the child wrote to stdout so far.
    package var outputText: String { String(decoding: output.withLock { $0 }, as: UTF8.self) }

    /// Waits until stdout holds `text`, the child ends, or `timeout` passes; returns whether it holds it.
    package func waitForOutput(_ text: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let needle = Array(text.utf8)
        while ContinuousClock.now < deadline {
            if output.withLock({ $0.firstRange(of: needle) != nil }) { return true }
            if poll() != nil { return output.withLock { $0.firstRange(of: needle) != nil } }
            usleep(200)
        }
        return false
    }

    /// The child's stderr (its last 2,000 bytes), for failure messages.
    package var stderrTail: String {
        let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return String(text.suffix(2_000))
    }

    /// A system call that starts the child failed.
    package struct SpawnError: Error, CustomStringConvertible {
        /// The call, such as `pipe`.
        package var operation: String
        /// Its `errno` value.
        package var errno: Int32

        /// The call and the system's text for the error.
        package var description: String { "\(operation): \(String(cString: strerror(errno)))" }
    }
}
