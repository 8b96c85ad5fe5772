import Foundation
import Hummingbird

/// Why a request failed, with the HTTP status it answers with and a message for the client.
/// `Sendable`.
///
/// The response body is `{"error": {"code": "…", "message": "…"}}`, so a client can tell a bad
/// predicate from an unknown object without parsing prose.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible, HTTPResponseError {
    /// What went wrong. An extensible set.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The raw value, as the response body carries it.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The raw value.
        public var description: String { rawValue }

        /// The request is malformed: a bad predicate, an unknown sort key, a body that does not
        /// decode. HTTP 400.
        public static let badRequest = Code(rawValue: "badRequest")
        /// No object has the ID. HTTP 404.
        public static let notFound = Code(rawValue: "notFound")
        /// The store has no room left for the write; reads keep working. HTTP 507.
        public static let insufficientStorage = Code(rawValue: "insufficientStorage")
        /// The change feed no longer keeps the history after the token a client resumes from:
        /// it was deleted as older than the service's history retention. HTTP 410.
        public static let tokenExpired = Code(rawValue: "tokenExpired")
    }

    /// What went wrong.
    public var code: Code
    /// A description of the problem for the client.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and message.
    public var description: String { "\(code): \(message)" }

    /// The HTTP status of ``code``.
    public var status: HTTPResponse.Status {
        switch code {
        case .notFound: .notFound
        case .insufficientStorage: HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
        case .tokenExpired: .gone
        default: .badRequest
        }
    }

    /// The JSON body naming the code and message.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try JSONEncoder().encode(ErrorBody(error: .init(code: code.rawValue, message: message)))
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The body of an error response: `{"error": {"code": "…", "message": "…"}}`.
struct ErrorBody: Codable {
    /// The error's code and message.
    struct Detail: Codable {
        /// ``ServiceError/code``.
        let code: String
        /// ``ServiceError/message``.
        let message: String
    }

    /// The error.
    let error: Detail
}
