import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Context behaviours Core Data code relies on, as Core Data has them: `reset()` and
/// `refresh(_:mergeChanges: false)` leave faults, a merged delete stays in `deletedObjects`,
/// dictionary fetches return object IDs, and history predicates compare entities and tokens.
@Suite struct ContextBehaviourTests {
    /// A container keeping history with a department of two employees saved.
    private static func company(in folder: TemporaryDirectory) throws -> PersistentContainer {
        try CoreDataBehaviourTests.company(in: folder, history: true)
    }

    @Test func savingAnObjectOfAnotherModelsEntityThrowsAndKeepsTheChanges() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let strangers = ModelBuilder.model([ModelBuilder.entity("Stranger", [ModelBuilder.attribute("name", .string)])])
        let stranger = try #require(strangers.entitiesByName["Stranger"])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = ManagedObject(entity: stranger, insertInto: context)
            object.setValue("Bob", forKey: "name")
            let intern = Employee(context: context)
            intern.name = "Eve"
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .coreData)
            #expect(error?.message.contains("Stranger") == true, "\(error?.message ?? "")")
            #expect(context.insertedObjects.count == 2, "the context keeps its changes")
            #expect(object.objectID.isTemporaryID)
            context.delete(object)
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let names = try reader.performAndWait { try reader.fetch(Employee.fetchRequest()).map(\.name).sorted() }
        #expect(names == ["Ada", "Eve", "Grace"])
        try container.close()
    }

    @Test func resetAndRefreshLeaveFaults() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employees = try context.fetch(Employee.fetchRequest())
            #expect(employees.allSatisfy { !$0.isFault })
            let ada = try #require(employees.first { $0.name == "Ada" })
            ada.salary = 5
            context.refresh(ada, mergeChanges: false)
            #expect(ada.isFault)
            #expect(!context.hasChanges)
            #expect(ada.salary == 120_000, "the fault reads the stored value")
            context.reset()
            #expect(employees.allSatisfy { $0.isFault })
            #expect(employees.allSatisfy { $0.managedObjectContext == nil })
            #expect(context.registeredObjects.isEmpty)
        }
        try container.close()
    }

    @Test func aMergedDeleteStaysInDeletedObjectsUntilTheNextSave() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let viewer = container.newBackgroundContext()
        let grace = try viewer.performAndWait {
            try #require(try viewer.fetch(Employee.fetchRequest()).first { $0.name == "Grace" })
        }
        let observed = Locked<Notification?>(nil)
        let token = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: nil, queue: nil
        ) { note in observed.withLock { $0 = note } }
        defer { NotificationCenter.default.removeObserver(token) }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            let doomed = try #require(try writer.fetch(Employee.fetchRequest()).first { $0.name == "Grace" })
            writer.delete(doomed)
            try writer.save()
        }
        let note = try #require(observed.current)
        try viewer.performAndWait {
            viewer.mergeChanges(fromContextDidSave: note)
            #expect(grace.isDeleted)
            #expect(grace.managedObjectContext === viewer)
            #expect(viewer.deletedObjects == [grace])
            #expect(viewer.hasChanges)
            let remaining = try viewer.count(for: Employee.fetchRequest())
            #expect(remaining == 1)
            try viewer.save()
            #expect(!viewer.hasChanges)
            #expect(grace.managedObjectContext == nil)
        }
        let count = try writer.performAndWait { try writer.count(for: Employee.fetchRequest()) }
        #expect(count == 1)
        try container.close()
    }

    @Test func dictionaryResultsCarryObjectIDs() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<FetchRequestResult>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["objectID", "name"]
            request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
            let rows = try #require(try context.fetch(request) as? [[String: Any]])
            let employees = try context.fetch(Employee.fetchRequest()).sorted { $0.name < $1.name }
            #expect(rows.compactMap { $0["objectID"] as? ManagedObjectID } == employees.map(\.objectID))
            #expect(rows.compactMap { $0["name"] as? String } == ["Ada", "Grace"])

            let evaluated = ExpressionDescription()
            evaluated.name = "id"
            evaluated.expression = FetchExpression.expressionForEvaluatedObject()
            evaluated.expressionResultType = .objectIDAttributeType
            request.propertiesToFetch = [evaluated]
            let ids = try #require(try context.fetch(request) as? [[String: Any]])
            #expect(ids.compactMap { $0["id"] as? ManagedObjectID } == employees.map(\.objectID))
        }
        try container.close()
    }

    @Test func historyPredicatesCompareEntitiesAndTokens() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let first = try #require(
                container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            let sales = try #require(try context.fetch(Department.fetchRequest()).first)
            sales.budget = 10
            Employee(context: context).name = "Linus"
            try context.save()

            let transactions = try #require(PersistentHistoryTransaction.fetchRequest)
            transactions.predicate = FetchPredicate(format: "token > %@", first)
            let after = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
            after.fetchRequest = transactions
            let later = try #require(
                (try context.execute(after) as? PersistentHistoryResult)?.result as? [PersistentHistoryTransaction])
            #expect(later.count == 1)
            #expect(later.first.map { $0.token > first } == true)

            let changes = try #require(PersistentHistoryChange.fetchRequest)
            changes.predicate = FetchPredicate(format: "changedEntity == %@", Employee.entity())
            let employeeChanges = PersistentHistoryChangeRequest.fetchHistory(after: first)
            employeeChanges.fetchRequest = changes
            let result = try context.execute(employeeChanges) as? PersistentHistoryResult
            let found = try #require(result?.result as? [PersistentHistoryTransaction]).flatMap { $0.changes ?? [] }
            #expect(found.map(\.changedObjectID.entity.name) == ["Employee"])
            #expect(found.map(\.changeType) == [.insert])
        }
        try container.close()
    }

    /// The main thread saves the view context and then waits in `performAndWait` of a private
    /// child that merges its parent's saves: the child's merge does not wait for the main queue,
    /// so both finish, as in Core Data.
    @Test(.waitsOnQueues) func aChildOfTheViewContextMergesWhileTheMainThreadWaitsForIt() async throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let view = container.viewContext
        let child = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = view
        child.automaticallyMergesChangesFromParent = true
        let ada = try child.performAndWait {
            try #require(try child.fetch(Employee.fetchRequest()).first { $0.name == "Ada" })
        }
        let id = ada.objectID
        let salary = try await MainActor.run {
            let viewAda = try #require(try view.existingObject(with: id) as? Employee)
            viewAda.salary = 7
            try view.save()
            return child.performAndWait { (child.registeredObject(for: id) as? Employee)?.salary }
        }
        #expect(salary == 7)
        withExtendedLifetime(ada) {}
        try container.close()
    }

    /// The view context changed and fetched on the main queue outside `perform`: its event ends
    /// when the main queue's current work item ends, as the run loop ends it on Apple's
    /// platforms, posting objects-did-change and letting go of the fetched objects.
    @Test(.waitsOnQueues) func theViewContextEndsItsEventWithTheMainQueuesWorkItem() async throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let view = container.viewContext
        let changed = ContextNotificationTests.Recorder(.ManagedObjectContextObjectsDidChange, view)
        let during = try await MainActor.run {
            Employee(context: view).name = "Linus"
            _ = try view.fetch(Department.fetchRequest())
            return (changed.posts.count, view.registeredObjects.count)
        }
        #expect(during.0 == 0, "no notification inside the work item")
        #expect(during.1 == 2, "the new employee and the fetched department")
        let after = await MainActor.run { (changed.posts.count, view.registeredObjects.count) }
        #expect(after.0 == 1, "the work item's end posted the change")
        #expect(after.1 == 1, "only the inserted employee is held")
        try container.close()
    }
}
