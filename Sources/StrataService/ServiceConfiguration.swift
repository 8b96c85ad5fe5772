import Foundation

/// Where a service listens, where it keeps its store and on which backend. `Sendable`.
///
/// Built from the environment (``init(environment:)``) and then from the command line, which
/// overrides it, as twelve-factor services are configured.
public struct ServiceConfiguration: Sendable, Hashable {
    /// The address to listen on. The default is `127.0.0.1`, the loopback address.
    public var host: String
    /// The port to listen on; 0 picks a free one. The default is 8080.
    public var port: Int
    /// The directory holding the store. The default is `./strata-service-data`.
    public var directory: URL
    /// The store behind the routes. The default is ``BackendKind/strata``.
    public var backend: BackendKind
    /// How long the change feed keeps the history of a transaction for clients that resume
    /// with a token; named consumers keep what they have not read for longer. `nil` keeps all
    /// history. The default is five minutes.
    public var historyRetention: Duration?
    /// Bytes of the store's cache: Strata's block cache of decoded blocks
    /// (`PersistentStoreDescription.cacheSize`), or the page cache of each SQLite connection
    /// (`PRAGMA cache_size`). `nil`, the default, keeps the backend's own: 256 MiB for Strata,
    /// SQLite's 2 MB a connection.
    public var cacheSize: Int?
    /// The most requests at work in background contexts at once on Strata (``ContextLimit``);
    /// the others wait their turn. GRDB's pool keeps its own limit. The default is
    /// ``ContextLimit/defaultLimit``, eight for each core.
    public var contexts: Int

    /// Creates a configuration; every parameter has the default its property documents.
    public init(
        host: String = "127.0.0.1", port: Int = 8080,
        directory: URL = URL(fileURLWithPath: "strata-service-data"), backend: BackendKind = .strata,
        historyRetention: Duration? = .seconds(300), cacheSize: Int? = nil, contexts: Int = ContextLimit.defaultLimit
    ) {
        self.host = host
        self.port = port
        self.directory = directory
        self.backend = backend
        self.historyRetention = historyRetention
        self.cacheSize = cacheSize
        self.contexts = contexts
    }

    /// The context limit `text` gives.
    ///
    /// - Throws: ``ServiceError`` `badRequest` naming `source` when it is not a whole number, 1
    ///   or more.
    public static func contexts(_ text: String, source: String) throws -> Int {
        guard let value = Int(text), (1...(1 << 20)).contains(value) else {
            throw ServiceError(.badRequest, "\(source) \(text) is not a number of contexts, 1 or more")
        }
        return value
    }

    /// The cache size `mebibytes` gives, in bytes.
    ///
    /// - Throws: ``ServiceError`` `badRequest` naming `source` when it is not a whole number of
    ///   mebibytes, 1 or more.
    public static func cacheSize(mebibytes: String, source: String) throws -> Int {
        guard let value = Int(mebibytes), (1...(1 << 30)).contains(value) else {
            throw ServiceError(.badRequest, "\(source)=\(mebibytes) is not a number of mebibytes")
        }
        return value << 20
    }

    /// The retention `seconds` gives: 0 keeps all history.
    ///
    /// - Throws: ``ServiceError`` `badRequest` naming `source` when it is not a whole number of
    ///   seconds, 0 or more.
    public static func historyRetention(seconds: String, source: String) throws -> Duration? {
        guard let value = Int64(seconds), value >= 0 else {
            throw ServiceError(.badRequest, "\(source)=\(seconds) is not a number of seconds")
        }
        return value == 0 ? nil : .seconds(value)
    }

    /// The configuration the environment gives: `STRATA_SERVICE_HOST`, `STRATA_SERVICE_PORT`,
    /// `STRATA_SERVICE_DIRECTORY`, `STRATA_SERVICE_BACKEND` (`strata` or `grdb`) and
    /// `STRATA_SERVICE_HISTORY_RETENTION` (seconds, 0 for all history) and
    /// `STRATA_SERVICE_CACHE_SIZE` (MiB) and `STRATA_SERVICE_CONTEXTS`, each falling back to its
    /// default when unset.
    ///
    /// - Throws: ``ServiceError`` `badRequest` naming the variable whose value is not valid.
    public init(environment: [String: String]) throws {
        self.init()
        if let host = environment["STRATA_SERVICE_HOST"] { self.host = host }
        if let text = environment["STRATA_SERVICE_PORT"] {
            guard let port = Int(text), (0...65_535).contains(port) else {
                throw ServiceError(.badRequest, "STRATA_SERVICE_PORT=\(text) is not a port number")
            }
            self.port = port
        }
        if let path = environment["STRATA_SERVICE_DIRECTORY"] { directory = URL(fileURLWithPath: path) }
        if let name = environment["STRATA_SERVICE_BACKEND"] {
            guard let backend = BackendKind(rawValue: name) else {
                throw ServiceError(.badRequest, "STRATA_SERVICE_BACKEND=\(name) is not one of strata, grdb")
            }
            self.backend = backend
        }
        if let seconds = environment["STRATA_SERVICE_HISTORY_RETENTION"] {
            historyRetention = try Self.historyRetention(seconds: seconds, source: "STRATA_SERVICE_HISTORY_RETENTION")
        }
        if let mebibytes = environment["STRATA_SERVICE_CACHE_SIZE"] {
            cacheSize = try Self.cacheSize(mebibytes: mebibytes, source: "STRATA_SERVICE_CACHE_SIZE")
        }
        if let text = environment["STRATA_SERVICE_CONTEXTS"] {
            contexts = try Self.contexts(text, source: "STRATA_SERVICE_CONTEXTS")
        }
    }
}
