import Foundation

/// The live tail of a store's persistent history: every transaction after a token, then each
/// new one as it commits, once each and in order. Not in Core Data.
///
/// Waiting costs nothing: the iterator sleeps until the store's next commit wakes it, and never
/// polls the log. Memory stays bounded: the iterator reads at most ``bufferLimit`` transactions
/// from the log at a time and reads again when they are consumed, so a slow consumer makes it
/// read from the log rather than buffer commits. Ends when the task is cancelled; throws when
/// the store closes or the history it needs was deleted (`persistentHistoryTokenExpired`).
///
/// ```swift
/// for try await transaction in coordinator.historyTransactions(after: token) {
///     context.perform { context.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
/// }
/// ```
public struct PersistentHistoryStream: AsyncSequence, Sendable {
    /// The transactions, with their changes.
    public typealias Element = PersistentHistoryTransaction

    /// The coordinator that reads the history.
    let coordinator: PersistentStoreCoordinator
    /// Where the tail starts (exclusive).
    let start: PersistentHistoryToken
    /// The most transactions read from the log at a time.
    public let bufferLimit: Int

    /// Creates an iterator starting after the stream's token.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self, cursor: start.sequence)
    }

    /// Reads the stream's transactions in order, waiting for commits when it reached the end.
    public struct Iterator: AsyncIteratorProtocol {
        let stream: PersistentHistoryStream
        var cursor: UInt64
        var buffer: [PersistentHistoryTransaction] = []
        var position = 0

        /// The next transaction, waiting for one to commit when there is none yet; `nil` once
        /// the task is cancelled.
        ///
        /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the history after the
        ///   cursor was deleted; `persistentStoreOperation` when the store was removed or closed.
        public mutating func next() async throws -> PersistentHistoryTransaction? {
            while !Task.isCancelled {
                if position < buffer.count {
                    defer { position += 1 }
                    return buffer[position]
                }
                let tail = try HistoryTail(
                    storeIdentifier: stream.start.storeIdentifier, coordinator: stream.coordinator)
                buffer = try stream.read(after: cursor)
                position = 0
                if let last = buffer.last {
                    cursor = UInt64(last.transactionNumber)
                    continue
                }
                guard !tail.isClosed else {
                    throw CoreDataError(
                        .persistentStoreOperation, "the store \(stream.start.storeIdentifier) was closed")
                }
                await tail.waitForCommit(after: cursor)
            }
            return nil
        }
    }

    /// Up to ``bufferLimit`` transactions after `sequence`, with their changes.
    func read(after sequence: UInt64) throws -> [PersistentHistoryTransaction] {
        let request = PersistentHistoryChangeRequest.fetchHistory(
            after: PersistentHistoryToken(storeIdentifier: start.storeIdentifier, sequence: sequence))
        let limit = PersistentHistoryTransaction.fetchRequest!
        limit.fetchLimit = bufferLimit
        request.fetchRequest = limit
        return try PersistentHistoryReader(request: request, coordinator: coordinator).run()
            as? [PersistentHistoryTransaction] ?? []
    }
}

extension PersistentStoreCoordinator {
    /// The live tail of the history of `token`'s store: the transactions after `token`, then
    /// each new one as it commits (see ``PersistentHistoryStream``). Not in Core Data.
    ///
    /// - Parameters:
    ///   - token: where to start (exclusive); the current token tails only what comes next.
    ///   - bufferLimit: the most transactions read from the log at a time. The default is 256.
    public func historyTransactions(
        after token: PersistentHistoryToken, bufferLimit: Int = 256
    ) -> PersistentHistoryStream {
        PersistentHistoryStream(coordinator: self, start: token, bufferLimit: max(1, bufferLimit))
    }
}
