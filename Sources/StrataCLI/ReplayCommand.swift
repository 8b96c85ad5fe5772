import ArgumentParser
import Foundation
import StrataStore

/// `strata replay SOURCE DEST [--after N]`: applies a store's history to another store.
struct ReplayCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Apply a store's history to another store of the same schema, resuming where it stopped.",
        discussion: """
            Opens SOURCE read-only and DEST for writing (creating it with the source's schema when \
            it does not exist). Each source transaction becomes one commit of DEST with the same \
            keys (so object IDs are preserved), author and context; DEST records the last source \
            transaction applied in the same commit, so running the command again, or after a crash, \
            applies only what is new. With --after N, starts after source transaction N (never \
            before what was applied). Shows a progress bar when standard error is a terminal.
            """)

    @OptionGroup var source: StoreArguments

    @Argument(help: "The destination store directory.")
    var destination: String

    @Option(help: ArgumentHelp("Start after source transaction number N.", valueName: "N"))
    var after: UInt64?

    func run() throws {
        let from = try source.openReadOnly()
        defer { try? from.close() }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        configuration.logger.logLevel = .warning
        let to = try Store.open(
            at: URL(fileURLWithPath: destination), schema: from.schema, configuration: configuration)
        let showsProgress = isatty(STDERR_FILENO) == 1
        let applied: Int
        do {
            applied = try to.replayHistory(from: from, after: after) { done, total in
                guard showsProgress, done == total || done % 64 == 0 else { return }
                let width = 30
                let filled = total == 0 ? width : width * done / total
                Output.status(
                    "\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total)"
                )
            }
        } catch {
            try? to.close()
            throw error
        }
        if showsProgress && applied > 0 { Output.status("\n") }
        try to.close()
        print("replayed \(applied) \(applied == 1 ? "transaction" : "transactions")")
    }
}
