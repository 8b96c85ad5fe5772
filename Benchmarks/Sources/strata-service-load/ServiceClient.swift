import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StrataService

/// An HTTP client of one `strata-service`, keeping at most `connections` connections open to
/// it: JSON in and out, dates in ISO 8601 as the service writes them. `Sendable`.
final class ServiceClient: Sendable {
    /// The answer to one request: its status and body.
    struct Answer: Sendable {
        /// The HTTP status code.
        var status: Int
        /// The body.
        var body: ByteBuffer

        /// Whether the status is 2xx.
        var succeeded: Bool { (200..<300).contains(status) }
    }

    /// `http://127.0.0.1:<port>`.
    let baseURL: String
    /// The underlying client.
    let http: HTTPClient

    /// The largest body read: a page of 1,000 employees.
    static let maximumBody = 16 << 20

    /// A client of the service at `baseURL` with at most `connections` connections, whose
    /// requests fail after `readTimeout` without a byte (never, when `nil`: a change feed).
    init(baseURL: String, connections: Int, readTimeout: TimeAmount? = .seconds(60)) {
        self.baseURL = baseURL
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5), read: readTimeout))
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes every connection.
    func shutdown() async {
        try? await http.shutdown()
    }

    /// Sends `method` to `path` with `body` (JSON) and returns the answer.
    ///
    /// - Throws: what the client throws when the connection fails or times out.
    func send(_ method: HTTPMethod, _ path: String, json body: Data? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        return Answer(status: Int(response.status.code), body: try await response.body.collect(upTo: Self.maximumBody))
    }

    /// Sends `method` to `path` with `value` encoded as JSON.
    func send<Value: Encodable>(_ method: HTTPMethod, _ path: String, _ value: Value) async throws -> Answer {
        try await send(method, path, json: try Self.encoder.encode(value))
    }

    /// Decodes an answer's body as `Value`.
    ///
    /// - Throws: ``LoadError`` when the request failed; what decoding throws.
    static func decode<Value: Decodable>(_ type: Value.Type, from answer: Answer) throws -> Value {
        guard answer.succeeded else {
            throw LoadError("HTTP \(answer.status): \(String(buffer: answer.body))")
        }
        return try decoder.decode(Value.self, from: Data(answer.body.readableBytesView))
    }

    /// The service's JSON encoding.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// The service's JSON decoding.
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
