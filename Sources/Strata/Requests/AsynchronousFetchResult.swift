import Foundation

/// The result of a request that runs after ``ManagedObjectContext/execute(_:)`` returns (Core
/// Data's `NSPersistentStoreAsynchronousResult`): its context, its progress and its error.
public class PersistentStoreAsynchronousResult: PersistentStoreResult {
    /// The context that executed the request.
    public let managedObjectContext: ManagedObjectContext
    /// Why the operation failed, once it has: ``CoreDataError`` (`userCancelled`, 3072, after a
    /// cancel); `nil` while it runs and when it succeeded.
    public internal(set) var operationError: (any Error)?
    /// The operation's progress, in results; cancelling it cancels the operation. It is a child
    /// of the thread's current `Progress` when the request was executed, if there was one.
    public let progress: Progress?

    /// Creates the result of an operation of `context`, with a cancellable progress of
    /// `estimatedCount` units (indeterminate when 0).
    init(context: ManagedObjectContext, estimatedCount: Int) {
        managedObjectContext = context
        let progress = Progress(totalUnitCount: estimatedCount > 0 ? Int64(estimatedCount) : -1)
        progress.isCancellable = true
        self.progress = progress
    }

    /// Cancels the operation: it stops at its next step and reports a ``CoreDataError`` with
    /// code `userCancelled`. Does nothing once it has ended.
    public func cancel() {
        progress?.cancel()
    }
}

/// The result of an ``AsynchronousFetchRequest`` (Core Data's `NSAsynchronousFetchResult`): the
/// request, and its objects once the fetch has ended. Use it on the context's queue.
public final class AsynchronousFetchResult<ResultType>: PersistentStoreAsynchronousResult {
    /// The request that made this result.
    public let fetchRequest: AsynchronousFetchRequest<ResultType>
    /// The fetched results, objects of the context; `nil` until the fetch ends, and when it
    /// failed or was cancelled.
    public internal(set) var finalResult: [ResultType]?

    /// Creates the result of `request` executed by `context`, before it runs.
    init(request: AsynchronousFetchRequest<ResultType>, context: ManagedObjectContext) {
        fetchRequest = request
        super.init(context: context, estimatedCount: request.estimatedResultCount)
    }
}
