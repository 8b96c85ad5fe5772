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
    /// Core Data declares it `async rethrows`; here the error type is the block's own (typed
    /// throws), which callers meet the same way: `await context.perform { … }` for a block that
    /// does not throw, `try await context.perform { try … }` for one that does.
    ///
    /// It runs in the caller's isolation (`nonisolated(nonsending)`), so the block may capture
    /// what the caller's actor holds, as Apple's form lets Core Data code do.
    ///
    /// - Parameters:
    ///   - schedule: ``ScheduledTaskType/immediate`` (the default: at once when the caller
    ///     already runs on the queue, as the view context from the main actor) or
    ///     ``ScheduledTaskType/enqueued``.
    ///   - block: the work. As in Core Data it is not `@Sendable`; what it returns is handed
    ///     to the awaiting task, so return object IDs or values, not managed objects.
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    nonisolated(nonsending) public func perform<T, E: Error>(
        schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws(E) -> T
    ) async throws(E) -> T {
        if schedule == .immediate && isOnQueue { return try runEvent(block) }
        let bound = QueueBound(value: block)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<QueueBound<Result<T, E>>, Never>) in
            queue.async {
                continuation.resume(returning: QueueBound(value: Result { () throws(E) -> T in try self.runEvent(bound.value) }))
            }
        }
        return try outcome.value.get()
    }

    /// Runs `block` as one event: the outermost of nested `perform`/`performAndWait` blocks ends
    /// it with ``processPendingChanges()``, as Core Data ends each run-loop event.
    func runEvent<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        eventDepth += 1
        defer {
            eventDepth -= 1
            if eventDepth == 0 { processPendingChanges() }
        }
        return try block()
    }
}
