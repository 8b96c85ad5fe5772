import ArgumentParser
import Foundation
import StrataStore

/// The `strata` command: inspects, verifies and maintains Strata stores.
///
/// Every failure is reported on standard error as `strata: <message>` with exit status 1; usage
/// errors are reported by ArgumentParser with its usual message and status.
@main
struct Strata: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, verify and maintain a Strata store, and explain fetches.",
        subcommands: [
            InfoCommand.self, VerifyCommand.self, CompactCommand.self, HistoryCommand.self, ExplainCommand.self,
            MigrateCommand.self,
            DumpCommand.self, ReplayCommand.self,
        ])

    /// Parses the command line and runs the subcommand it names, reporting failures as
    /// `strata: <message>` on standard error.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            try command.run()
        } catch  where command is any StrataSubcommand && !(error is ExitCode) {
            Output.error("strata: \(message(for: error))")
            exit(withError: ExitCode.failure)
        } catch {
            exit(withError: error)
        }
    }

    /// A one-line description of `error` for the user: what failed and, for a store error, the
    /// file and offset concerned.
    static func message(for error: any Error) -> String {
        guard let error = error as? StoreError else { return "\(error)" }
        var text =
            error.code == .locked
            ? "another process has the store open for writing; close it and try again"
            : error.message
        if let path = error.path {
            text += " (\(path)" + (error.offset.map { ", offset \($0)" } ?? "") + ")"
        }
        if let cause = error.cause { text += ": \(cause)" }
        return text
    }
}

/// A subcommand of `strata` (not one ArgumentParser provides, such as `help`): its failures are
/// reported as `strata: <message>`.
protocol StrataSubcommand: ParsableCommand {}
