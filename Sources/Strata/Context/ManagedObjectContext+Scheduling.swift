extension ManagedObjectContext {
    /// When `perform(schedule:_:)` runs its block (Core Data's `ScheduledTaskType`). `Sendable`.
    public enum ScheduledTaskType: Sendable, Hashable {
        /// At once when the caller already runs on the context's queue, else enqueued.
        case immediate
        /// Always enqueued, after the blocks already given to the context.
        case enqueued
    }

    /// Runs `block` on the context's queue as `schedule` says and returns its result to the
    /// awaiting task (Core Data's `perform(schedule:_:)`). The block ends the event
    /// (``processPendingChanges()``) unless it runs inside another block of the context.
    ///
    /// - Parameters:
    ///   - schedule: ``ScheduledTaskType/immediate`` or ``ScheduledTaskType/enqueued``.
    ///   - block: the work; capture the context and object IDs, not managed objects.
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    public func perform<T: Sendable>(schedule: ScheduledTaskType, _ block: @escaping @Sendable () throws -> T) async throws -> T {
        if schedule == .immediate && isOnQueue { return try runEvent(block) }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try self.runEvent(block) }) }
        }
    }

    /// Runs `block` as one event: the outermost of nested `perform`/`performAndWait` blocks ends
    /// it with ``processPendingChanges()``, as Core Data ends each run-loop event.
    func runEvent<T>(_ block: () throws -> T) rethrows -> T {
        eventDepth += 1
        defer {
            eventDepth -= 1
            if eventDepth == 0 { processPendingChanges() }
        }
        return try block()
    }
}
