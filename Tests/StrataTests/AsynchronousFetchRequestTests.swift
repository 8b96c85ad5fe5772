import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// An object whose `awakeFromFetch` runs a hook, so that a test can act in the middle of a fetch.
/// Its entity has its own name: class registrations are global, by entity name.
final class AwakeningItem: ManagedObject {
    @Managed var rank: Int64

    /// Runs on each object a fetch realizes, on the context's queue.
    static let onAwake = Locked<(@Sendable () -> Void)?>(nil)

    override func awakeFromFetch() {
        Self.onAwake.current?()
    }
}

/// `AsynchronousFetchRequest` executed by a context on a store on disk: the completion's results
/// against a plain fetch, the progress, cancelling a large fetch half-way, and the error paths.
@Suite(.serialized) struct AsynchronousFetchRequestTests {
    /// Saves employees `Employee 0` … with salaries 0, 10, 20, …
    static func seedEmployees(_ count: Int, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<count {
                let employee = Employee(context: context)
                employee.name = "Employee \(index)"
                employee.salary = Int64(index * 10)
            }
            try context.save()
        }
    }

    /// Executes `request` on `context`'s queue, then waits for the blocks enqueued so far (the
    /// fetch and its completion) to run; returns the result and how many times the completion ran.
    static func run<T>(
        _ fetch: FetchRequest<T>, in context: ManagedObjectContext, estimate: Int = 0, cancelAtOnce: Bool = false
    ) throws -> (result: AsynchronousFetchResult<T>, completions: Int) {
        var completions = 0
        let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
            #expect(result.managedObjectContext === context)
            completions += 1
        }
        request.estimatedResultCount = estimate
        let result = try context.performAndWait {
            let result = try #require(try context.execute(request) as? AsynchronousFetchResult<T>)
            #expect(result.finalResult == nil && completions == 0)
            if cancelAtOnce { result.cancel() }
            return result
        }
        context.performAndWait {}
        return (result, completions)
    }

    @Test func theCompletionGetsWhatFetchReturnsAfterReopening() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        try Self.seedEmployees(2_500, in: container)
        try container.close()
        container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        // An unsaved object counts, as in fetch(_:).
        context.performAndWait {
            let pending = Employee(context: context)
            pending.name = "Pending"
            pending.salary = 30_005
        }
        let request = Employee.fetchRequest()
        request.predicate = try FetchPredicate(checkedFormat: "salary >= %@", 5_000)
        request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]

        let (result, completions) = try Self.run(request, in: context)
        #expect(completions == 1)
        #expect(result.operationError == nil)
        let objects = try #require(result.finalResult)
        let expected = try context.performAndWait { try context.fetch(request) }
        #expect(objects.count == 2_001)
        #expect(objects.map(\.objectID) == expected.map(\.objectID))
        #expect(objects.first?.name == "Pending")
        context.performAndWait {
            #expect(objects.allSatisfy { $0.managedObjectContext === context && !$0.isFault })
            #expect(objects.last?.salary == 5_000)
        }
        #expect(result.progress?.totalUnitCount == 2_001)
        #expect(result.progress?.completedUnitCount == 2_001)
    }

    @Test func aChildContextFetchesThroughItsParentsUnsavedChanges() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seedEmployees(300, in: container)
        let parent = container.newBackgroundContext()
        try parent.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = try FetchPredicate(checkedFormat: "salary < %@", 100)
            for employee in try parent.fetch(request) { parent.delete(employee) }
            let added = Employee(context: parent)
            added.name = "Added in the parent"
            added.salary = 100_000
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let request = Employee.fetchRequest()
        request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 64

        let (result, _) = try Self.run(request, in: child)
        let objects = try #require(result.finalResult)
        #expect(objects.count == 291)
        child.performAndWait {
            #expect(objects.first?.salary == 100 && objects.last?.name == "Added in the parent")
            #expect(objects.allSatisfy { $0.managedObjectContext === child })
        }
        #expect(objects.map(\.objectID) == (try child.performAndWait { try child.fetch(request) }).map(\.objectID))
    }

    @Test func theProgressStartsAtTheEstimateAndReachesItsTotal() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seedEmployees(1_200, in: container)
        let context = container.newBackgroundContext()
        let request = Employee.fetchRequest()
        request.fetchBatchSize = 100

        let estimated = AsynchronousFetchRequest(fetchRequest: request, completionBlock: nil)
        estimated.estimatedResultCount = 40
        let parent = Progress(totalUnitCount: 1)
        parent.becomeCurrent(withPendingUnitCount: 1)
        // Checked on the context's queue: the fetch, queued there, cannot have started yet.
        let result = try context.performAndWait {
            let result = try context.execute(estimated) as! AsynchronousFetchResult<Employee>
            #expect(result.progress?.totalUnitCount == 40)
            return result
        }
        parent.resignCurrent()
        context.performAndWait {}
        #expect(result.finalResult?.count == 1_200)
        let progress = try #require(result.progress)
        #expect(progress.totalUnitCount == 1_200 && progress.completedUnitCount == 1_200)
        #expect(progress.isFinished)
        #expect(parent.fractionCompleted == 1)

        // A count request is one pass: its progress counts its one result.
        let counting = FetchRequest<Int>(entityName: "Employee")
        counting.resultType = .countResultType
        let (count, _) = try Self.run(counting, in: context)
        #expect(count.finalResult == [1_200])
        #expect(count.progress?.completedUnitCount == count.progress?.totalUnitCount)
    }

    @Test func cancellingHalfWayEndsWithTheCancelledErrorAndNoResults() throws {
        let folder = TemporaryDirectory()
        let item = ModelBuilder.entity(
            "AwakeningItem", [ModelBuilder.attribute("rank", .integer64, isOptional: false)], className: "AwakeningItem"
        )
        AwakeningItem.register(for: "AwakeningItem")
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([item]))
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            for rank in 0..<5_000 { AwakeningItem(context: writer).rank = Int64(rank) }
            try writer.save()
        }
        let context = container.newBackgroundContext()
        let request = FetchRequest<AwakeningItem>(entityName: "AwakeningItem")
        request.fetchBatchSize = 100
        let asynchronous = AsynchronousFetchRequest(fetchRequest: request) { result in
            #expect(result.finalResult == nil)
        }
        // Cancel while the third batch is being realized (the hook is in place before the fetch
        // is queued; the result is bound on the context's queue, before the fetch can start).
        let awakened = Locked(0)
        let bound = Locked<AsynchronousFetchResult<AwakeningItem>?>(nil)
        AwakeningItem.onAwake.withLock { hook in
            hook = {
                if awakened.withLock({ count in
                    count += 1
                    return count
                }) == 250 {
                    bound.current?.cancel()
                }
            }
        }
        defer { AwakeningItem.onAwake.withLock { $0 = nil } }
        let result = try context.performAndWait {
            let result = try context.execute(asynchronous) as! AsynchronousFetchResult<AwakeningItem>
            bound.withLock { $0 = result }
            return result
        }
        context.performAndWait {}

        #expect(result.finalResult == nil)
        let error = try #require(result.operationError as? CoreDataError)
        #expect(error.code == .userCancelled)
        #expect((error as NSError).domain == NSCocoaErrorDomain && (error as NSError).code == 3072)
        #expect(result.progress?.isCancelled == true)
        #expect(result.progress?.totalUnitCount == 5_000)
        #expect(result.progress?.completedUnitCount == 300)
        #expect(awakened.current == 300)
        // The store lost nothing.
        let reader = container.newBackgroundContext()
        #expect(
            try reader.performAndWait {
                try reader.count(for: FetchRequest<AwakeningItem>(entityName: "AwakeningItem"))
            } == 5_000)
    }

    @Test func cancellingBeforeItRunsFetchesNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seedEmployees(10, in: container)
        let context = container.newBackgroundContext()
        let (result, completions) = try Self.run(Employee.fetchRequest(), in: context, cancelAtOnce: true)
        #expect(completions == 1)
        #expect(result.finalResult == nil)
        #expect((result.operationError as? CoreDataError)?.code == .userCancelled)
        #expect(result.progress?.completedUnitCount == 0)
        #expect(context.performAndWait { context.registeredObjects.isEmpty })
    }

    @Test func anUnknownEntityThrowsAndSchedulesNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let completions = Locked(0)
        let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Nowhere")) { _ in
            completions.withLock { $0 += 1 }
        }
        let error = context.performAndWait { () -> CoreDataError? in
            do {
                _ = try context.execute(request)
                return nil
            } catch {
                return error as? CoreDataError
            }
        }
        #expect(error?.code == .coreData)
        context.performAndWait {}
        #expect(completions.current == 0)
    }

    @Test func aFailingFetchReportsItsErrorToTheCompletion() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seedEmployees(3, in: container)
        let context = container.newBackgroundContext()
        // Dictionaries are not Employees: the fetch itself fails.
        let request = Employee.fetchRequest()
        request.resultType = .dictionaryResultType
        let (result, completions) = try Self.run(request, in: context)
        #expect(completions == 1)
        #expect(result.finalResult == nil)
        #expect((result.operationError as? CoreDataError)?.code == .coreData)
    }
}
