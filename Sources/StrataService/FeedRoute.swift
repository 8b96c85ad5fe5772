import AsyncAlgorithms
import Foundation
import Hummingbird
import ServiceLifecycle

/// `GET /feed`: the change feed as server-sent events, one per committed transaction, from
/// the live tail.
///
/// It starts after `after` (a token from an event's `id:`), else after the `Last-Event-ID`
/// header a reconnecting `EventSource` sends, else at the cursor of the named `consumer`, else
/// at the current end (only what commits next). With `consumer=NAME` the store keeps the
/// consumer's cursor, moved past each event once it is written, so a consumer that reconnects
/// without a token resumes where it was. `limit=N` ends the response after N events. The
/// stream ends when the service shuts down gracefully. A token older than the history the
/// service keeps (``HistoryRetentionService``) is answered with 410 Gone.
public enum FeedRoute {
    /// The header a reconnecting server-sent events client sends with the last `id:` it saw,
    /// as field names are canonically spelled (lowercase).
    static let lastEventID = "last-event-id"

    /// Adds `GET /feed` over `backend` to `router`.
    static func add<Context: RequestContext>(to router: Router<Context>, backend: any Backend) {
        router.get("feed") { request, context -> Response in
            let parameters = request.queryDictionary
            let consumer = parameters["consumer"].flatMap { $0.isEmpty ? nil : $0 }
            let limit = try parameters["limit"].map { (text) throws(ServiceError) -> Int in
                guard let limit = Int(text), limit > 0 else {
                    throw ServiceError(.badRequest, "limit=\(text) is not a positive number")
                }
                return limit
            }
            let start: Int64
            let resumeFrom = request.headers.first { $0.name.canonicalName == lastEventID }?.value
            if let text = parameters["after"] ?? resumeFrom {
                guard let token = Int64(text), token >= 0 else {
                    throw ServiceError(.badRequest, "the feed token \(text) is not a number")
                }
                let oldest = try await backend.oldestToken()
                guard token >= oldest else {
                    throw ServiceError(
                        .tokenExpired,
                        "the history after the feed token \(token) was deleted (the feed keeps it after \(oldest)); "
                            + "start again from a consumer or the current end")
                }
                start = token
            } else if let consumer {
                start = try await backend.consumerToken(named: consumer)
            } else {
                start = try await backend.currentToken()
            }
            context.logger.debug(
                "feed opened", metadata: ["after": "\(start)", "consumer": "\(consumer ?? "-")"])
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    try await stream(backend: backend, after: start, consumer: consumer, limit: limit, to: &writer)
                })
        }
    }

    /// Writes the transactions after `start` to `writer` until `limit` events, graceful
    /// shutdown, or the client going away.
    ///
    /// The backend's tail runs in a child task that graceful shutdown cancels; a channel hands
    /// its transactions over one at a time, so a slow client holds the tail back instead of
    /// letting transactions pile up in memory.
    private static func stream(
        backend: any Backend, after start: Int64, consumer: String?, limit: Int?,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        let channel = AsyncThrowingChannel<FeedTransaction, any Error>()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await cancelWhenGracefulShutdown {
                        try await backend.forEachTransaction(after: start) { await channel.send($0) }
                    }
                    channel.finish()
                } catch is CancellationError {
                    channel.finish()
                } catch {
                    channel.fail(error)
                }
            }
            var delivered = 0
            for try await transaction in channel {
                try await writer.write(ByteBuffer(string: try transaction.serverSentEvent(encoder: encoder)))
                if let consumer { try await backend.advanceConsumer(named: consumer, to: transaction.token) }
                delivered += 1
                if let limit, delivered >= limit { break }
            }
            group.cancelAll()
        }
        try await writer.finish(nil)
    }
}
