/// How a child process ended.
package enum ChildExit: Equatable, Sendable, CustomStringConvertible {
    /// It exited with this status.
    case exited(Int32)
    /// A signal, such as `SIGKILL`, ended it.
    case signalled(Int32)

    /// The end in words, for failure messages.
    package var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signalled(let signal): return "killed by signal \(signal)"
        }
    }
}
