import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Members and behaviours Core Data code relies on, as Apple documents them: key-value coding
/// over key paths, sort descriptors from key paths, expression descriptions built as Core Data
/// code builds them, the save notifications, and `NSObject` equality.
@Suite struct CoreDataBehaviourTests {
    /// A container with a department of two employees saved, history kept when `history`.
    static func company(in folder: TemporaryDirectory, history: Bool = false) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription(url: folder.store())
        description.isHistoryTrackingEnabled = history
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let sales = Department(context: context)
            sales.name = "Sales"
            for (name, salary) in [("Ada", Int64(120_000)), ("Grace", 90_000)] {
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = salary
                employee.department = sales
            }
            try context.save()
        }
        return container
    }

    @Test func keyValueCodingFollowsKeyPaths() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(format: "name == %@", "Ada")
            let ada = try #require(try context.fetch(request).first)
            #expect(ada.value(forKeyPath: "department.name") as? String == "Sales")
            #expect(ada.value(forKeyPath: "name") as? String == "Ada")
            let sales = try #require(ada.department)
            #expect(sales.value(forKeyPath: "employees.name") as? Set<String> == ["Ada", "Grace"])
            #expect(sales.value(forKeyPath: "employees.@count") as? Int == 2)
            #expect(sales.value(forKeyPath: "employees.@sum.salary") as? Int64 == 210_000)
            #expect(sales.value(forKeyPath: "employees.@max.salary") as? Int64 == 120_000)

            ada.setValue("Sales and Marketing", forKeyPath: "department.name")
            #expect(sales.name == "Sales and Marketing")
            ada.setValuesForKeys(["name": "Ada L.", "notes": NSNull()])
            #expect(ada.name == "Ada L.")
            #expect(ada.notes == nil)
            let values = ada.dictionaryWithValues(forKeys: ["name", "notes"])
            #expect(values["name"] as? String == "Ada L.")
            #expect(values["notes"] is NSNull)
            try context.save()
        }
        try container.close()
    }

    @Test func sortDescriptorsAndExpressionsFromKeyPaths() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(keyPath: \Employee.salary, ascending: true)]
            #expect(try context.fetch(request).map(\.name) == ["Grace", "Ada"])
            #expect(FetchSortDescriptor(keyPath: \Employee.department?.name, ascending: false).key == "department.name")

            // Core Data's aggregate fetch, as its documentation builds it.
            let total = ExpressionDescription()
            total.name = "total"
            total.expression = FetchExpression(forFunction: "sum:", arguments: [FetchExpression(forKeyPath: "salary")])
            total.expressionResultType = .integer64AttributeType
            let sums = FetchRequest<FetchRequestResult>(entityName: "Employee")
            sums.resultType = .dictionaryResultType
            sums.propertiesToFetch = [total]
            let rows = try context.fetch(sums) as? [[String: Any]]
            #expect(rows?.first?["total"] as? Int64 == 210_000)
            #expect(total.expression?.function == "sum:")
        }
        try container.close()
    }

    /// `willAccessValue(forKey: nil)` fires the fault, as Core Data's does.
    @Test func willAccessValueForNilFiresTheFault() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.returnsObjectsAsFaults = true
            request.includesPropertyValues = false
            let employee = try #require(try context.fetch(request).first)
            context.refresh(employee, mergeChanges: false)
            #expect(employee.isFault)
            employee.willAccessValue(forKey: "name")
            #expect(employee.isFault, "a key leaves the fault to the read")
            employee.willAccessValue(forKey: nil)
            #expect(!employee.isFault)
        }
        try container.close()
    }

    /// A fetched results controller takes an empty array of sort descriptors, as Core Data's
    /// does; only `nil` is refused.
    @Test func aFetchedResultsControllerTakesEmptySortDescriptors() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = []
            let controller = FetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            #expect(Set(controller.fetchedObjects?.map(\.name) ?? []) == ["Ada", "Grace"])
            request.sortDescriptors = nil
            #expect(throws: CoreDataError.self) { try controller.performFetch() }
        }
        try container.close()
    }

    /// A save with nothing to save posts will-save and did-save, with no objects; a did-save of a
    /// store keeping history carries the token after the save's transaction.
    @Test func saveNotifications() throws {
        for history in [false, true] {
            let folder = TemporaryDirectory()
            let container = try Self.company(in: folder, history: history)
            let context = container.newBackgroundContext()
            let posts = Locked<[Notification]>([])
            let tokens = [
                ManagedObjectContext.willSaveObjectsNotification, ManagedObjectContext.didSaveObjectsNotification,
            ].map { name in
                NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { note in
                    posts.withLock { $0.append(note) }
                }
            }
            defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
            try context.performAndWait { try context.save() }
            #expect(posts.current.map(\.name) == [.ManagedObjectContextWillSave, .ManagedObjectContextDidSave])
            #expect(posts.current.last?.userInfo?.isEmpty ?? true)

            try context.performAndWait {
                Employee(context: context).name = "Linus"
                try context.save()
            }
            let token =
                posts.current.last?.userInfo?[ManagedObjectContext.NotificationKey.newChangeToken.rawValue]
                as? PersistentHistoryToken
            #expect((token != nil) == history, "history \(history)")
            if let token {
                let next = try context.performAndWait {
                    let result =
                        try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
                        as? PersistentHistoryResult
                    return (result?.result as? [PersistentHistoryTransaction])?.count
                }
                #expect(next == 0, "the token is the position after the save")
            }
            try container.close()
        }
    }

    /// Numbers compared with a String attribute match its text, as Core Data's SQLite store
    /// matches them (text affinity); saved rows and unsaved objects alike.
    @Test func numbersMatchTheTextOfStringAttributes() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["9", "10", "12", "x"] { Employee(context: context).name = name }
            try context.save()
            Employee(context: context).name = "11"
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(format: "name IN {9, 10, 11}")
            #expect(Set(try context.fetch(request).map(\.name)) == ["9", "10", "11"])
            request.predicate = FetchPredicate(format: "name == %@", 12)
            #expect(try context.fetch(request).map(\.name) == ["12"])
            request.predicate = FetchPredicate(format: "salary IN {0}")
            #expect(try context.count(for: request) == 5, "other attributes compare as before")
        }
        try container.close()
    }

    /// With two stores, `assign(_:to:)` picks the store an inserted object is saved to, and
    /// `affectedStores` limits a fetch to some of them; both survive a reopen.
    @Test func assignedObjectsAndAffectedStores() throws {
        let folder = TemporaryDirectory()
        let first = folder.store("First"), second = folder.store("Second")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
            let firstStore = try coordinator.addPersistentStore(type: .sqlite, at: first)
            let secondStore = try coordinator.addPersistentStore(type: .sqlite, at: second)
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                Employee(context: context).name = "Ada"
                let grace = Employee(context: context)
                grace.name = "Grace"
                context.assign(grace, to: secondStore)
                #expect(grace.objectID.storeIdentifier == secondStore.identifier)
                try context.save()
                let request = Employee.fetchRequest()
                request.affectedStores = [secondStore]
                #expect(try context.fetch(request).map(\.name) == ["Grace"])
                request.affectedStores = [firstStore]
                #expect(try context.fetch(request).map(\.name) == ["Ada"])
                request.affectedStores = nil
                #expect(try context.count(for: request) == 2)
            }
            try coordinator.remove(firstStore)
            try coordinator.remove(secondStore)
        }
        for (url, name) in [(first, "Ada"), (second, "Grace")] {
            let container = try GraphModel.container(at: url)
            let context = container.newBackgroundContext()
            #expect(try context.performAndWait { try context.fetch(Employee.fetchRequest()).map(\.name) } == [name])
            try container.close()
        }
    }

    /// A having predicate names an expression description as a variable (`$count`), and a batch
    /// insert's object handler receives the entity's class, as in Core Data.
    @Test func havingVariablesAndTypedBatchInsertObjects() throws {
        let folder = TemporaryDirectory()
        let container = try Self.company(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var remaining = ["Linus", "Ken"]
            let insert = BatchInsertRequest(
                entityName: "Employee",
                managedObjectHandler: { object in
                    guard let employee = object as? Employee, let name = remaining.popLast() else { return true }
                    employee.name = name
                    employee.salary = 50_000
                    return false
                })
            _ = try context.execute(insert)
            #expect(try context.count(for: Employee.fetchRequest()) == 4)

            let count = ExpressionDescription()
            count.name = "count"
            count.expression = FetchExpression(forFunction: "count:", arguments: [FetchExpression(forKeyPath: "name")])
            let bySalary = FetchRequest<FetchRequestResult>(entityName: "Employee")
            bySalary.resultType = .dictionaryResultType
            bySalary.propertiesToGroupBy = ["salary"]
            bySalary.propertiesToFetch = ["salary", count]
            bySalary.havingPredicate = FetchPredicate(format: "$count > 1")
            let rows = try context.fetch(bySalary) as? [[String: Any]]
            #expect(rows?.compactMap { $0["salary"] as? Int64 } == [50_000])
        }
        try container.close()
    }

    /// `%K` after a variable's dot names keys of the variable's value, as in a fetched
    /// property's `%K == $FETCH_SOURCE.%K`.
    @Test func keyPathArgumentsFollowAVariable() throws {
        let predicate = FetchPredicate(format: "%K == $FETCH_SOURCE.%K", "name", "owner.name")
        #expect(predicate.predicateFormat == "name == $FETCH_SOURCE.owner.name")
        let source: [String: Any] = ["owner": ["name": "Ada"]]
        #expect(predicate.evaluate(with: ["name": "Ada"], substitutionVariables: ["FETCH_SOURCE": source]))
        #expect(!predicate.evaluate(with: ["name": "Grace"], substitutionVariables: ["FETCH_SOURCE": source]))
    }

    /// Contexts, requests, coordinators and stores equal only themselves, as `NSObject`s do;
    /// predicates compare by format, as `NSPredicate`s do.
    @Test func equalityAsNSObjects() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let first = container.newBackgroundContext(), second = container.newBackgroundContext()
        #expect(first == first)
        #expect(first != second)
        #expect(Set([first, second, first]).count == 2)
        #expect(Employee.fetchRequest() != Employee.fetchRequest())
        #expect(FetchPredicate(format: "name == %@", "Ada") == FetchPredicate(format: "name == 'Ada'"))
        #expect(FetchPredicate(format: "name == %@", "Ada") != FetchPredicate(format: "name == %@", "Grace"))
        #expect(Set([FetchPredicate(format: "salary > 1"), FetchPredicate(format: "salary > 1")]).count == 1)
        #expect(container.persistentStoreCoordinator == container.persistentStoreCoordinator)
        try container.close()
    }
}
