import Dispatch

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
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<QueueBound<Result<T, E>>, Never>) in
            queue.async {
                continuation.resume(
                    returning: QueueBound(value: Result { () throws(E) -> T in try self.runEvent(bound.value) }))
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
            if eventDepth == 0 { endEvent() }
        }
        return try block()
    }

    /// Ends the event: processes its changes and lets go of the objects kept for it.
    private func endEvent() {
        processPendingChanges()
        eventObjects.removeAll()
    }

    /// Keeps `objects` (a fetch's results, a save's objects) alive until the event ends, so that
    /// they stay registered even when the caller drops them at once, as Core Data's autorelease
    /// pool keeps them until it drains. Outside an event, a main-queue context on the main queue
    /// keeps them until the queue's current work item ends; other contexts do not keep them.
    func keepUntilEventEnds(_ objects: [ManagedObject]) {
        guard !objects.isEmpty else { return }
        if eventDepth == 0 {
            guard concurrencyType == .mainQueueConcurrencyType, isOnQueue else { return }
            endEventAfterWorkItem()
        }
        eventObjects.append(objects)
    }

    /// Notes a change: a main-queue context changed on the main queue outside `perform` ends its
    /// event when the queue's current work item ends, as the run loop ends Core Data's.
    func noteChangeOutsideEvent() {
        guard eventDepth == 0, concurrencyType == .mainQueueConcurrencyType, isOnQueue else { return }
        endEventAfterWorkItem()
    }

    /// Ends the event once the main queue's current work item is done (once, however often asked
    /// before then).
    private func endEventAfterWorkItem() {
        guard !eventEndScheduled else { return }
        eventEndScheduled = true
        let context = QueueBound(value: self)
        DispatchQueue.main.async {
            let context = context.value
            context.eventEndScheduled = false
            if context.eventDepth == 0 { context.endEvent() }
        }
    }
}
