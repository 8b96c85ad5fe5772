import ArgumentParser
import Foundation
import Logging
import StrataStore

/// The store directory every subcommand takes, and how the subcommands open it.
struct StoreArguments: ParsableArguments {
    @Argument(help: "The store directory (by convention Name.strata).")
    var path: String

    /// The store directory's URL.
    var url: URL { URL(fileURLWithPath: path) }

    /// Opens the store read-only with the schema it holds: no lock is taken and nothing is
    /// written, so this works while another process has the store open for writing.
    ///
    /// - Throws: ``StoreError`` `notFound`, `unsupportedFormat`, `corrupt` or `io`.
    func openReadOnly() throws -> Store {
        var configuration = Self.configuration
        configuration.readOnly = true
        return try Store.open(at: url, schema: nil, configuration: configuration)
    }

    /// Opens the existing store for writing, with the schema it holds and without background
    /// maintenance.
    ///
    /// A directory without a manifest is refused before the store's lock file would be created
    /// in it.
    ///
    /// - Throws: ``StoreError`` `locked` when another process has the store open for writing,
    ///   `notFound`, `unsupportedFormat`, `corrupt` or `io`.
    func openForWriting() throws -> Store {
        try checkDirectoryExists()
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest").path) else {
            throw StoreError(.unsupportedFormat, "the directory is not a Strata store (no manifest)", path: path)
        }
        return try Store.open(at: url, schema: nil, configuration: Self.configuration)
    }

    /// The configuration the subcommands open with: never create a store, no background
    /// maintenance, and only warnings (such as a torn tail or an unusable checkpoint) logged.
    private static var configuration: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = false
        configuration.logger.logLevel = .warning
        return configuration
    }
}

extension StoreArguments {
    /// Throws when there is no directory at ``path``.
    ///
    /// - Throws: ``StoreError`` `notFound`.
    func checkDirectoryExists() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StoreError(.notFound, "no store at this path", path: path)
        }
    }

    /// Sends log messages to standard error from warning level up (opening a store logs at info
    /// level; only warnings belong beside a command's output), and from `verboseLabel`'s logger
    /// from debug level up.
    static func logWarningsOnly(except verboseLabel: String? = nil) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = label == verboseLabel ? .debug : .warning
            return handler
        }
    }
}
