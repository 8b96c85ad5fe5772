import AsyncHTTPClient
import Foundation
import NIOCore
import StrataService

/// A client of the change feed: `GET /feed?after=<token>`, its server-sent events parsed into
/// ``FeedTransaction``s as they arrive.
enum FeedReader {
    /// Follows the feed of the service `client` talks to, from after `token` (from the current
    /// end when `nil`), calling `connected` once the response has begun and `handle` with each
    /// transaction, until the response ends, the connection drops or the task is cancelled.
    ///
    /// - Throws: ``LoadError`` for an error status or an event that does not decode; what the
    ///   client throws when the connection fails.
    static func follow(
        _ client: ServiceClient, after token: Int64?, connected: @Sendable () -> Void = {},
        handle: (FeedTransaction) async throws -> Void
    ) async throws {
        var request = HTTPClientRequest(url: client.baseURL + "/feed" + (token.map { "?after=\($0)" } ?? ""))
        request.method = .GET
        let response = try await client.http.execute(request, timeout: .hours(24))
        guard response.status == .ok else { throw LoadError("GET /feed answered \(response.status)") }
        connected()
        let decoder = ServiceClient.decoder
        var pending: [UInt8] = []
        for try await chunk in response.body {
            pending += chunk.readableBytesView
            var start = 0
            while let end = eventEnd(in: pending, from: start) {
                let event = String(decoding: pending[start..<end], as: UTF8.self)
                start = end + 2
                for line in event.split(separator: "\n") where line.hasPrefix("data: ") {
                    do {
                        try await handle(try decoder.decode(FeedTransaction.self, from: Data(line.dropFirst(6).utf8)))
                    } catch let error as DecodingError {
                        throw LoadError("a feed event does not decode (\(error)): \(line)")
                    }
                }
            }
            pending.removeFirst(start)
        }
    }

    /// Where the first event in `bytes` from `start` on ends: the offset of the blank line
    /// (`\n\n`) after it.
    private static func eventEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0A && bytes[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
