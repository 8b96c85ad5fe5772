import Foundation
import FoundationNetworking
import Logging
import Prometheus
import ServiceLifecycle
import StrataService
import StrataServiceGRDB
import StrataTestSupport

/// A service started in this process on 127.0.0.1 with a free port, over a backend of either
/// kind in its own temporary directory, with a real HTTP client.
final class RunningService: Sendable {
    /// The backend the routes run on.
    let backend: any Backend
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL
    /// The group running the backend and the server.
    private let group: ServiceGroup
    /// The task running the group.
    private let running: Task<Void, any Error>
    /// The client; one per service, so no connection outlives it.
    let session: URLSession

    /// Opens a backend of `kind` in `directory` (wrapped by `wrap`, for tests that hold a
    /// request back) with a cache of `cacheSize` bytes (the backend's default when `nil`) and,
    /// on Strata, at most `contexts` requests at work at once, and starts the service on it,
    /// keeping history for `historyRetention` (all of it by default); returns once the server
    /// listens.
    static func start(
        _ kind: BackendKind, in directory: URL, historyRetention: Duration? = nil, cacheSize: Int? = nil,
        contexts: Int = ContextLimit.defaultLimit, wrap: (any Backend) -> any Backend = { $0 }
    ) async throws -> RunningService {
        var logger = Logger(label: "strata-service-test")
        logger.logLevel = .warning
        let opened: any Backend =
            switch kind {
            case .strata:
                try StrataBackend(directory: directory, logger: logger, cacheSize: cacheSize, contexts: contexts)
            case .grdb: try GRDBBackend(directory: directory, logger: logger, cacheSize: cacheSize)
            }
        let backend = wrap(opened)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = ServiceApplication.serviceGroup(
            configuration: ServiceConfiguration(
                host: "127.0.0.1", port: 0, directory: directory, backend: kind, historyRetention: historyRetention),
            backend: backend, registry: PrometheusCollectorRegistry(), logger: logger, gracefulShutdownSignals: []
        ) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ServiceTestError("the server did not start") }
        return RunningService(
            backend: backend, baseURL: URL(string: "http://127.0.0.1:\(port)")!, group: group, running: running)
    }

    private init(backend: any Backend, baseURL: URL, group: ServiceGroup, running: Task<Void, any Error>) {
        self.backend = backend
        self.baseURL = baseURL
        self.group = group
        self.running = running
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        session = URLSession(configuration: configuration)
    }

    /// Shuts the service down gracefully, as SIGTERM does, and waits until it has stopped.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        session.invalidateAndCancel()
    }

    /// Sends `method path` with `body` as JSON and returns the status and the response body.
    func send(
        _ method: String, _ path: String, body: (some Encodable & Sendable)? = nil as Int?,
        headers: [String: String] = [:]
    ) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + path)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try Self.encoder.encode(body)
        }
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// Sends `method path` with `body` and decodes the response as `type`, requiring `status`.
    func json<Response: Decodable>(
        _ type: Response.Type, _ method: String, _ path: String, body: (some Encodable & Sendable)? = nil as Int?,
        status expected: Int = 200
    ) async throws -> Response {
        let (status, data) = try await send(method, path, body: body)
        guard status == expected else {
            throw ServiceTestError(
                "\(method) \(path): \(status), not \(expected): \(String(decoding: data, as: UTF8.self))")
        }
        return try Self.decoder.decode(type, from: data)
    }

    /// The API's JSON encoding: ISO 8601 dates.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    /// The API's JSON decoding: ISO 8601 dates.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// A failed expectation about the service, with what was seen.
struct ServiceTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
