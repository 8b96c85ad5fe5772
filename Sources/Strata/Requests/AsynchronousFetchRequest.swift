/// The completion block of an untyped ``AsynchronousFetchRequest`` (Core Data's
/// `NSPersistentStoreAsynchronousFetchResultCompletionBlock`).
public typealias PersistentStoreAsynchronousFetchResultCompletionBlock = (AsynchronousFetchResult<FetchRequestResult>)
    -> Void

/// A fetch that runs on its context's queue after ``ManagedObjectContext/execute(_:)`` returns,
/// reports its progress through a cancellable Foundation `Progress`, and hands its results to a
/// completion block (Core Data's `NSAsynchronousFetchRequest`).
///
/// ```swift
/// let request = AsynchronousFetchRequest(fetchRequest: Employee.fetchRequest()) { result in
///     guard let employees = result.finalResult else { return }   // nil on error or cancel
///     show(employees)
/// }
/// let result = try context.execute(request) as! AsynchronousFetchResult<Employee>
/// result.progress?.cancel()                                        // stops it between batches
/// ```
///
/// The fetch matches as ``ManagedObjectContext/fetch(_:)`` does (unsaved changes included), then
/// realizes the objects a batch at a time (``FetchRequest/fetchBatchSize``, or 1,000 without
/// one), counting each batch in the
/// progress and stopping at the first batch boundary after a cancel. The completion block runs on
/// the context's queue, with every object realized. Not `Sendable`: use it on the context's queue.
public final class AsynchronousFetchRequest<ResultType>: PersistentStoreRequest {
    /// The completion block's type (Core Data's `NSPersistentStoreAsynchronousFetchResultCompletionBlock`).
    public typealias CompletionBlock = (AsynchronousFetchResult<ResultType>) -> Void

    /// How many objects a batch realizes when the fetch request sets no ``FetchRequest/fetchBatchSize``.
    static var defaultBatchSize: Int { 1_000 }

    /// The fetch to run.
    public let fetchRequest: FetchRequest<ResultType>
    /// What runs on the context's queue when the fetch ends, succeeded, failed or cancelled.
    public let completionBlock: CompletionBlock?
    /// The number of results expected, the progress's total before the fetch knows it; 0 (the
    /// default) leaves the progress indeterminate until then.
    public var estimatedResultCount = 0

    /// Creates an asynchronous fetch of `fetchRequest` reporting to `completionBlock`.
    ///
    /// - Parameters:
    ///   - fetchRequest: the fetch to run; it must name an entity of the context's model.
    ///   - completionBlock: called on the context's queue with the result when the fetch ends.
    public init(fetchRequest: FetchRequest<ResultType>, completionBlock: CompletionBlock?) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
        super.init()
    }

    /// Schedules the fetch on the context's queue and returns its result at once, without
    /// results yet.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the fetch request names no entity of the model;
    ///   nothing is scheduled then. Errors of the fetch itself go to the result's
    ///   ``PersistentStoreAsynchronousResult/operationError``.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        _ = try fetchRequest.resolveEntity(in: coordinator.managedObjectModel)
        let result = AsynchronousFetchResult(request: self, context: context)
        context.scheduleAsynchronousFetch(result)
        return result
    }
}
