import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A one-to-many relationship kept through its inverse's foreign key (`Department.employees`,
/// kept by `Employee.department`): moving, adding and deleting an employee records an update of
/// each department whose `employees` changed, as Core Data's history does, and merging that
/// history leaves the view context's departments right.
@Suite struct PersistentHistoryInverseToManyTests {
    /// Two departments and one employee in the first; their IDs.
    static func fill(
        _ container: PersistentContainer
    ) throws -> (first: ManagedObjectID, second: ManagedObjectID, employee: ManagedObjectID) {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let first = Department(context: context)
            first.name = "First"
            let second = Department(context: context)
            second.name = "Second"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.department = first
            try context.save()
            return (first.objectID, second.objectID, ada.objectID)
        }
    }

    /// The changes of the one transaction after `token`, by object ID.
    static func changes(
        after token: PersistentHistoryToken, in container: PersistentContainer
    ) throws -> [ManagedObjectID: PersistentHistoryChange] {
        let transactions = try PersistentHistoryTests.transactions(.fetchHistory(after: token), in: container)
        #expect(transactions.count == 1)
        let changes = transactions.first?.changes ?? []
        return Dictionary(changes.map { ($0.changedObjectID, $0) }) { first, _ in first }
    }

    @Test func movingAnEmployeeRecordsAnUpdateOfBothDepartments() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try Self.fill(container)
        let viewContext = container.viewContext
        // The view context shows both departments' employees before the move.
        let shown = try viewContext.performAndWait {
            let first = try #require(try viewContext.existingObject(with: ids.first) as? Department)
            let second = try #require(try viewContext.existingObject(with: ids.second) as? Department)
            #expect(first.employees.map(\.name) == ["Ada"])
            #expect(second.employees.isEmpty)
            return (first, second)
        }
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))

        let background = container.newBackgroundContext()
        try background.performAndWait {
            let ada = try #require(try background.existingObject(with: ids.employee) as? Employee)
            ada.department = try #require(try background.existingObject(with: ids.second) as? Department)
            try background.save()
        }

        let changes = try Self.changes(after: token, in: container)
        #expect(changes.count == 3)
        #expect(changes[ids.employee]?.changeType == .update)
        #expect(changes[ids.employee]?.updatedProperties?.map(\.name) == ["department"])
        for department in [ids.first, ids.second] {
            #expect(changes[department]?.changeType == .update)
            #expect(changes[department]?.updatedProperties?.map(\.name) == ["employees"])
        }
        // Merged into the view context, both departments show the move.
        let transaction = try #require(
            try PersistentHistoryTests.transactions(.fetchHistory(after: token), in: container).first)
        viewContext.performAndWait {
            let info = transaction.objectIDNotification().userInfo ?? [:]
            #expect(
                (info[ManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue] as? Set<ManagedObjectID>) == [
                    ids.employee, ids.first, ids.second,
                ])
            viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            #expect(shown.0.employees.isEmpty)
            #expect(shown.1.employees.map(\.name) == ["Ada"])
        }
        try container.close()
    }

    @Test func insertingAndDeletingAnEmployeeRecordAnUpdateOfItsDepartment() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try Self.fill(container)
        let context = container.newBackgroundContext()

        let beforeInsert = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let grace = try context.performAndWait {
            let grace = Employee(context: context)
            grace.name = "Grace"
            grace.department = try #require(try context.existingObject(with: ids.second) as? Department)
            try context.save()
            return grace.objectID
        }
        var changes = try Self.changes(after: beforeInsert, in: container)
        #expect(changes.count == 2)
        #expect(changes[grace]?.changeType == .insert)
        #expect(changes[ids.second]?.updatedProperties?.map(\.name) == ["employees"])
        #expect(changes[ids.first] == nil, "the first department did not change")

        let beforeDelete = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try context.performAndWait {
            context.delete(try context.existingObject(with: ids.employee))
            try context.save()
        }
        changes = try Self.changes(after: beforeDelete, in: container)
        #expect(changes.count == 2)
        #expect(changes[ids.employee]?.changeType == .delete)
        #expect(changes[ids.first]?.changeType == .update)
        #expect(changes[ids.first]?.updatedProperties?.map(\.name) == ["employees"])

        // A department deleted with its employees (cascade) records deletes only.
        let beforeCascade = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try context.performAndWait {
            context.delete(try context.existingObject(with: ids.second))
            try context.save()
        }
        changes = try Self.changes(after: beforeCascade, in: container)
        #expect(Set(changes.keys) == [ids.second, grace])
        #expect(changes.values.allSatisfy { $0.changeType == .delete })
        try container.close()
    }

    /// A transaction of many changes (more than a record searches one by one) names each
    /// department once, whether the transaction inserted it or it was stored before.
    @Test func largeTransactionsRecordEachDepartmentOnce() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try Self.fill(container)
        let context = container.newBackgroundContext()

        let beforeInsert = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let third = try context.performAndWait {
            let second = try #require(try context.existingObject(with: ids.second) as? Department)
            let third = Department(context: context)
            third.name = "Third"
            for index in 0..<60 {
                let employee = Employee(context: context)
                employee.name = "E\(index)"
                employee.department = index.isMultiple(of: 2) ? second : third
            }
            try context.save()
            return third.objectID
        }
        let changes =
            try PersistentHistoryTests.transactions(.fetchHistory(after: beforeInsert), in: container).first?.changes
            ?? []
        #expect(changes.count == 62, "60 inserted employees, the inserted department, an update of the stored one")
        let byObject = Dictionary(grouping: changes, by: \.changedObjectID)
        #expect(byObject.values.allSatisfy { $0.count == 1 })
        #expect(byObject[third]?.first?.changeType == .insert)
        #expect(byObject[ids.second]?.first?.changeType == .update)
        #expect(byObject[ids.second]?.first?.updatedProperties?.map(\.name) == ["employees"])
        #expect(byObject[ids.first] == nil, "the first department did not change")
        #expect(changes.filter { $0.changeType == .insert && $0.changedObjectID.entity.name == "Employee" }.count == 60)
        try container.close()
    }
}
