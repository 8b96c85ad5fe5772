import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The old and new values of a one-to-many relationship kept through its inverse's foreign key
/// (`Department.employees`, kept by `Employee.department`): each update of a department that
/// history records when an employee moves, joins or leaves carries the set of employee IDs
/// before and after, as the to-many relationships kept in join entities do, also after reopen.
@Suite struct PersistentHistoryInverseToManyValuesTests {
    /// The `employees` before and after of the update of `department` in `transaction`.
    static func employees(
        of department: ManagedObjectID, in transaction: PersistentHistoryTransaction
    ) throws -> (before: Set<ManagedObjectID>?, after: Set<ManagedObjectID>?) {
        let change = try #require(transaction.changes?.first { $0.changedObjectID == department })
        #expect(change.changeType == .update)
        #expect(change.updatedProperties?.map(\.name) == ["employees"])
        return (
            change.previousValues?["employees"] as? Set<ManagedObjectID>,
            change.newValues?["employees"] as? Set<ManagedObjectID>
        )
    }

    @Test func movesJoinsAndLeavesCarryTheEmployeesBeforeAndAfterAlsoAfterReopen() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try PersistentHistoryInverseToManyTests.fill(container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = container.newBackgroundContext()
        // 1: Ada moves from the first department to the second.
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids.employee) as? Employee)
            ada.department = try #require(try context.existingObject(with: ids.second) as? Department)
            try context.save()
        }
        // 2: Grace joins the second department.
        let grace = try context.performAndWait {
            let grace = Employee(context: context)
            grace.name = "Grace"
            grace.department = try #require(try context.existingObject(with: ids.second) as? Department)
            try context.save()
            return grace.objectID
        }
        // 3: Ada leaves (is deleted).
        try context.performAndWait {
            context.delete(try context.existingObject(with: ids.employee))
            try context.save()
        }

        for reopened in [false, true] {
            if reopened {
                try container.close()
                container = try PersistentHistoryTests.container(at: folder.store())
            }
            let transactions = try PersistentHistoryTests.transactions(.fetchHistory(after: token), in: container)
            try #require(transactions.count == 3)
            let move = (
                first: try Self.employees(of: ids.first, in: transactions[0]),
                second: try Self.employees(of: ids.second, in: transactions[0])
            )
            #expect(move.first.before == [ids.employee] && move.first.after == [], "reopened: \(reopened)")
            #expect(move.second.before == [] && move.second.after == [ids.employee], "reopened: \(reopened)")
            let join = try Self.employees(of: ids.second, in: transactions[1])
            #expect(join.before == [ids.employee] && join.after == [ids.employee, grace], "reopened: \(reopened)")
            let leave = try Self.employees(of: ids.second, in: transactions[2])
            #expect(leave.before == [ids.employee, grace] && leave.after == [grace], "reopened: \(reopened)")
        }
        try container.close()
    }

    @Test func changesOnlyResultsCarryTheValuesToo() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try PersistentHistoryInverseToManyTests.fill(container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids.employee) as? Employee)
            ada.department = try #require(try context.existingObject(with: ids.second) as? Department)
            try context.save()
        }
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.resultType = .changesOnly
        let changes = try #require(try PersistentHistoryTests.run(request, in: container) as? [PersistentHistoryChange])
        let first = try #require(changes.first { $0.changedObjectID == ids.first })
        #expect(first.previousValues?["employees"] as? Set<ManagedObjectID> == [ids.employee])
        #expect(first.newValues?["employees"] as? Set<ManagedObjectID> == [])
        try container.close()
    }
}
