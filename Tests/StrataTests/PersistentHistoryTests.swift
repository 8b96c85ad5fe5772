import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Core Data's persistent history examples, on a Strata store on disk: fetch after a token,
/// filter with fetch requests, merge into the view context, purge, tokens kept across launches.
@Suite struct PersistentHistoryTests {
    /// A container with one store at `url` keeping persistent history, loaded.
    static func container(
        at url: URL, model: ManagedObjectModel = GraphModel.make(),
        options: [String: Any] = [PersistentHistoryTrackingKey: true]
    ) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Company", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.durability = .relaxed
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try PersistentStoreDescriptionTests.load(container)
        return container
    }

    /// Saves, in a new background context with `author`, the employees named in `names`.
    @discardableResult
    static func insert(
        _ names: [String], author: String? = nil, in container: PersistentContainer
    ) throws -> [ManagedObjectID] {
        let context = container.newBackgroundContext()
        context.transactionAuthor = author
        context.name = "importer"
        return try context.performAndWait {
            let employees = names.map { name in
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = 50_000
                return employee
            }
            try context.save()
            return employees.map(\.objectID)
        }
    }

    /// Runs a history request in a new context and returns its result.
    static func run(_ request: PersistentHistoryChangeRequest, in container: PersistentContainer) throws -> Any? {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let result = try context.execute(request) as? PersistentHistoryResult
            #expect(result?.resultType == request.resultType)
            return result?.result
        }
    }

    /// The transactions a fetch request returns.
    static func transactions(
        _ request: PersistentHistoryChangeRequest, in container: PersistentContainer
    ) throws -> [PersistentHistoryTransaction] {
        try #require(try run(request, in: container) as? [PersistentHistoryTransaction])
    }

    @Test func fetchAfterTokenReturnsTheLaterTransactionsWithTheirChanges() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        let ids = try Self.insert(["Ada", "Grace"], author: "importer", in: container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))

        let context = container.newBackgroundContext()
        context.transactionAuthor = "editor"
        context.name = "editing"
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
            ada.salary = 90_000
            context.delete(try context.existingObject(with: ids[1]))
            try context.save()
        }

        let all = try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(all.count == 2)
        #expect(all[0].author == "importer" && all[0].contextName == "importer")
        #expect(all[0].changes?.map(\.changeType) == [.insert, .insert])
        #expect(Set(all[0].changes?.map(\.changedObjectID) ?? []) == Set(ids))
        #expect(all[0].token == token)

        let later = try Self.transactions(.fetchHistory(after: token), in: container)
        let transaction = try #require(later.first)
        #expect(later.count == 1)
        #expect(transaction.author == "editor" && transaction.contextName == "editing")
        #expect(transaction.transactionNumber > all[0].transactionNumber)
        #expect(transaction.storeID == container.persistentStoreCoordinator.persistentStores[0].identifier)
        #expect(transaction.token > token)
        let changes = try #require(transaction.changes)
        #expect(changes.count == 2)
        let update = try #require(changes.first { $0.changeType == .update })
        #expect(update.changedObjectID == ids[0])
        #expect(update.updatedProperties?.map(\.name) == ["salary"])
        #expect(update.tombstone == nil)
        #expect(update.transaction === transaction)
        let delete = try #require(changes.first { $0.changeType == .delete })
        #expect(delete.changedObjectID == ids[1])
        #expect(delete.updatedProperties == nil)
        #expect(Set(changes.map(\.changeID)).count == 2)

        #expect(try Self.transactions(.fetchHistory(after: transaction), in: container).isEmpty)
        #expect(try Self.transactions(.fetchHistory(after: transaction.token), in: container).isEmpty)
    }

    @Test func fetchHistoryAfterADateSkipsEarlierTransactions() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        try Self.insert(["Ada"], in: container)
        let first = try #require(
            try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container).first)
        try Self.insert(["Grace"], in: container)
        let after = try Self.transactions(.fetchHistory(after: first.timestamp), in: container)
        #expect(after.map(\.transactionNumber) == [first.transactionNumber + 1])
        #expect(
            try Self.transactions(.fetchHistory(after: first.timestamp.addingTimeInterval(-3600)), in: container).count
                == 2)
    }

    @Test func fetchRequestFiltersTransactionsByAuthorAndContextName() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        try Self.insert(["Ada"], author: "app", in: container)
        try Self.insert(["Grace", "Linus"], author: "sync", in: container)
        try Self.insert(["Barbara"], author: "app", in: container)

        let fetchRequest = try #require(PersistentHistoryTransaction.fetchRequest)
        fetchRequest.predicate = try FetchPredicate(checkedFormat: "author != %@", "app")
        let request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        request.fetchRequest = fetchRequest
        let others = try Self.transactions(request, in: container)
        #expect(others.map(\.author) == ["sync"])
        #expect(others.first?.changes?.count == 2)

        let byContext = try #require(PersistentHistoryTransaction.fetchRequest)
        byContext.predicate = try FetchPredicate(checkedFormat: "contextName == %@ AND author == %@", "importer", "app")
        byContext.fetchLimit = 1
        #expect(try Self.transactions(.fetchHistory(withFetch: byContext), in: container).count == 1)

        let all = try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        let since = try #require(PersistentHistoryTransaction.fetchRequest)
        since.predicate = try FetchPredicate(
            checkedFormat: "timestamp >= %@ AND transactionNumber > %@", argumentArray: [all[1].timestamp, 1])
        since.fetchOffset = 1
        #expect(
            try Self.transactions(.fetchHistory(withFetch: since), in: container).map(\.transactionNumber) == [
                all[2].transactionNumber
            ])
        #expect(PersistentHistoryTransaction.entityDescription?.name == "PersistentHistoryTransaction")
        #expect(PersistentHistoryTransaction.entityDescription?.attributesByName["author"] != nil)
    }

    @Test func changeFetchRequestFiltersChangesByTypeAndEntity() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        let ids = try Self.insert(["Ada", "Grace"], in: container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "Research"
            context.delete(try context.existingObject(with: ids[0]))
            try context.save()
        }
        let employee = try #require(container.managedObjectModel.entitiesByName["Employee"])

        let deletes = try #require(PersistentHistoryChange.fetchRequest)
        deletes.predicate = try FetchPredicate(
            checkedFormat: "changeType == %d", PersistentHistoryChangeType.delete.rawValue)
        let request = PersistentHistoryChangeRequest.fetchHistory(withFetch: deletes)
        request.resultType = .changesOnly
        let deleted = try #require(try Self.run(request, in: container) as? [PersistentHistoryChange])
        #expect(deleted.map(\.changedObjectID) == [ids[0]])
        #expect(deleted.first?.transaction?.transactionNumber == 2)

        let ofEmployees = try #require(PersistentHistoryChange.fetchRequest)
        ofEmployees.predicate = try FetchPredicate(
            checkedFormat: "changedEntity == %@ AND changeType == 0", argumentArray: [employee])
        let inserts = try Self.transactions(.fetchHistory(withFetch: ofEmployees), in: container)
        #expect(inserts.count == 1, "only the first transaction inserted employees")
        #expect(inserts.first?.changes?.count == 2)

        let byName = try #require(PersistentHistoryChange.fetchRequest)
        byName.predicate = try FetchPredicate(
            checkedFormat: "changedEntity.name == 'Department' AND transaction.author == nil")
        let departments = try Self.transactions(.fetchHistory(withFetch: byName), in: container)
        #expect(departments.flatMap { $0.changes ?? [] }.map(\.changedObjectID.entity.name) == ["Department"])
    }

    @Test func objectIDNotificationMergesHistoryIntoTheViewContext() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        let ids = try Self.insert(["Ada", "Grace"], in: container)
        let viewContext = container.viewContext
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let shown = try viewContext.performAndWait {
            let ada = try #require(try viewContext.existingObject(with: ids[0]) as? Employee)
            #expect(ada.salary == 50_000)
            return [ada, try viewContext.existingObject(with: ids[1])]
        }

        let background = container.newBackgroundContext()
        let linus = try background.performAndWait {
            let ada = try #require(try background.existingObject(with: ids[0]) as? Employee)
            ada.salary = 75_000
            background.delete(try background.existingObject(with: ids[1]))
            let linus = Employee(context: background)
            linus.name = "Linus"
            try background.save()
            return linus.objectID
        }

        let transactions = try Self.transactions(.fetchHistory(after: token), in: container)
        #expect(transactions.count == 1)
        try viewContext.performAndWait {
            for transaction in transactions {
                let notification = transaction.objectIDNotification()
                let info = try #require(notification.userInfo)
                #expect(
                    info[ManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue] as? Set<ManagedObjectID> == [
                        linus
                    ])
                viewContext.mergeChanges(fromContextDidSave: notification)
            }
            let ada = try #require(viewContext.registeredObject(for: ids[0]) as? Employee)
            #expect(ada === shown[0])
            #expect(ada.salary == 75_000)
            #expect(shown[1].isDeleted && viewContext.deletedObjects.contains(shown[1]), "deleted in the view context until its next save")
        }

        // The same changes, as data from elsewhere, merge with mergeChanges(fromRemoteContextSave:into:).
        let other = container.newBackgroundContext()
        let linusSeen = try other.performAndWait { try other.existingObject(with: linus) as? Employee }
        try background.performAndWait {
            let object = try #require(try background.existingObject(with: linus) as? Employee)
            object.salary = 99_000
            try background.save()
        }
        let next = try #require(try Self.transactions(.fetchHistory(after: transactions[0].token), in: container).first)
        ManagedObjectContext.mergeChanges(
            fromRemoteContextSave: next.objectIDNotification().userInfo ?? [:], into: [other])
        #expect(other.performAndWait { linusSeen?.salary } == 99_000)
    }

    @Test func deleteHistoryPurgesAndExpiresOlderTokens() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        try Self.insert(["Ada"], in: container)
        let early = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try Self.insert(["Grace"], in: container)
        let processed = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try Self.insert(["Linus"], in: container)

        let purge = PersistentHistoryChangeRequest.deleteHistory(before: processed)
        purge.resultType = .count
        #expect(try Self.run(purge, in: container) as? Int == 2)
        let remaining = try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(remaining.map(\.transactionNumber) == [Int64(processed.sequence) + 1])
        #expect(
            try Self.transactions(.fetchHistory(after: processed), in: container).count == 1,
            "the purge token still fetches")

        let error = #expect(throws: CoreDataError.self) { try Self.run(.fetchHistory(after: early), in: container) }
        #expect(error?.code == .persistentHistoryTokenExpired)
        #expect(error?.code.rawValue == 134_301)

        // Purging survives a reopen, and what was kept is still there.
        try container.close()
        let reopened = try Self.container(at: folder.store())
        #expect(try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: reopened).count == 1)
        #expect(throws: CoreDataError.self) { try Self.run(.fetchHistory(after: early), in: reopened) }
        let count = try reopened.viewContext.performAndWait {
            try reopened.viewContext.count(for: Employee.fetchRequest())
        }
        #expect(count == 3, "purging history deletes no objects")
    }

    @Test func deleteHistoryBeforeATransactionOrADateKeepsThatTransaction() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        for name in ["Ada", "Grace", "Linus", "Barbara"] { try Self.insert([name], in: container) }
        let all = try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(all.count == 4)

        let purge = PersistentHistoryChangeRequest.deleteHistory(before: all[1])
        purge.resultType = .statusOnly
        #expect(try Self.run(purge, in: container) as? Bool == true)
        #expect(
            try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container).map(
                \.transactionNumber) == all[1...].map(\.transactionNumber))

        let byDate = PersistentHistoryChangeRequest.deleteHistory(before: all[3].timestamp)
        byDate.resultType = .transactionsOnly
        let deleted = try #require(try Self.run(byDate, in: container) as? [PersistentHistoryTransaction])
        #expect(deleted.allSatisfy { $0.timestamp < all[3].timestamp })
        let kept = try Self.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(kept.last?.transactionNumber == all[3].transactionNumber)
        #expect(kept.count + deleted.count == 3)
    }

    @Test func resultTypesShapeTheResult() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store())
        let ids = try Self.insert(["Ada", "Grace"], in: container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
            ada.salary = 60_000
            try context.save()
        }
        func fetch(_ type: PersistentHistoryResultType) throws -> Any? {
            let request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
            request.resultType = type
            return try Self.run(request, in: container)
        }
        #expect(try fetch(.statusOnly) as? Bool == true)
        #expect(try fetch(.count) as? Int == 2)
        #expect(try fetch(.objectIDs) as? [ManagedObjectID] == ids)
        let transactionsOnly = try #require(try fetch(.transactionsOnly) as? [PersistentHistoryTransaction])
        #expect(transactionsOnly.count == 2 && transactionsOnly.allSatisfy { $0.changes == nil })
        let changesOnly = try #require(try fetch(.changesOnly) as? [PersistentHistoryChange])
        #expect(changesOnly.map(\.changeType) == [.insert, .insert, .update])
        #expect(changesOnly.map { $0.transaction?.transactionNumber } == [1, 1, 2])
        let both = try #require(try fetch(.transactionsAndChanges) as? [PersistentHistoryTransaction])
        #expect(both.map { $0.changes?.count } == [2, 1])
        #expect(PersistentHistoryChangeRequest.fetchHistory(after: Date()).resultType == .transactionsAndChanges)
    }

    @Test func tombstoneKeepsTheValuesPreservedAfterDeletion() throws {
        let folder = TemporaryDirectory()
        let model = GraphModel.make()
        try #require(model.entitiesByName["Employee"]?.attributesByName["name"]).preservesValueInHistoryOnDeletion =
            true
        let container = try Self.container(at: folder.store(), model: model)
        let ids = try Self.insert(["Ada"], in: container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.delete(try context.existingObject(with: ids[0]))
            try context.save()
        }
        let deletes = try #require(PersistentHistoryChange.fetchRequest)
        deletes.predicate = try FetchPredicate(checkedFormat: "changeType == 2")
        let request = PersistentHistoryChangeRequest.fetchHistory(withFetch: deletes)
        request.resultType = .changesOnly
        let change = try #require((try Self.run(request, in: container) as? [PersistentHistoryChange])?.first)
        #expect(change.changedObjectID == ids[0])
        let tombstone = try #require(change.tombstone)
        #expect(tombstone["name"] as? String == "Ada")
        #expect(tombstone["salary"] == nil, "salary is not preserved after deletion")
    }

    @Test func historyRequestsOnAStoreWithoutTrackingFail() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(at: folder.store(), options: [:])
        try Self.insert(["Ada"], in: container)
        #expect(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
        let error = #expect(throws: CoreDataError.self) {
            try Self.run(.fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        }
        #expect(error?.code == .persistentStoreOperation)
    }
}
