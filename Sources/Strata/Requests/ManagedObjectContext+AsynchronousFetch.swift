import Foundation
import Logging

private let logger = Logger(label: "strata.fetch")

extension ManagedObjectContext {
    /// Enqueues the fetch of `result` on the context's queue: it runs as one event after the
    /// blocks already given to the context, then calls the request's completion block.
    func scheduleAsynchronousFetch<T>(_ result: AsynchronousFetchResult<T>) {
        let bound = QueueBound(value: result)
        perform { [self] in
            let result = bound.value
            do {
                result.finalResult = try runAsynchronousFetch(result)
            } catch {
                result.operationError = error
                logger.debug("asynchronous fetch ended without results", metadata: ["error": "\(error)"])
            }
            result.fetchRequest.completionBlock?(result)
        }
    }

    /// Runs the fetch of `result`: matches the objects, then realizes them batch by batch,
    /// counting them in the progress and checking for a cancel before each batch.
    ///
    /// - Throws: ``CoreDataError`` `userCancelled` when the progress was cancelled, and what
    ///   ``fetch(_:)`` throws.
    private func runAsynchronousFetch<T>(_ result: AsynchronousFetchResult<T>) throws -> [T] {
        let request = result.fetchRequest.fetchRequest
        let progress = result.progress
        try Self.checkCancellation(progress)
        guard request.resultType == .managedObjectResultType else {
            // IDs, dictionaries and counts come from one pass over the rows: one unit of progress.
            let results = try fetch(request)
            progress?.totalUnitCount = Int64(results.count)
            progress?.completedUnitCount = Int64(results.count)
            return results
        }
        let plan = try plan(request, counting: false)
        let (candidates, stores) = try candidates(request, plan: plan)
        let ids = candidates.map { objectID(of: $0, plan: plan, stores: stores) }
        progress?.totalUnitCount = Int64(ids.count)
        let batchSize =
            request.fetchBatchSize > 0 ? request.fetchBatchSize : AsynchronousFetchRequest<T>.defaultBatchSize
        var results: [T] = []
        results.reserveCapacity(ids.count)
        for start in stride(from: 0, to: ids.count, by: batchSize) {
            try Self.checkCancellation(progress)
            let batch = Array(ids[start..<min(start + batchSize, ids.count)])
            let objects = request.includesPropertyValues ? try realizeObjects(batch) : batch.map { object(with: $0) }
            if let paths = request.relationshipKeyPathsForPrefetching, !paths.isEmpty, request.includesPropertyValues {
                try prefetch(paths, for: objects)
            }
            guard let typed = objects as? [T] else {
                throw CoreDataError(
                    .coreData,
                    "the fetched objects are not \(T.self); register the subclass with \(T.self).register(for:)")
            }
            results += typed
            progress?.completedUnitCount = Int64(results.count)
        }
        logger.debug(
            "asynchronous fetch done",
            metadata: ["entity": "\(request.entityName ?? "?")", "objects": "\(results.count)"])
        return results
    }

    /// Throws the cancelled error when `progress` was cancelled.
    private static func checkCancellation(_ progress: Progress?) throws {
        if progress?.isCancelled == true {
            throw CoreDataError(.userCancelled, "the asynchronous fetch was cancelled")
        }
    }
}
