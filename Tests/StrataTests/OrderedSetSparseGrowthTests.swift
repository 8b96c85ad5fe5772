import OrderedCollections
import Testing
@testable import Strata

/// `OrderedSet.appendKeepingTableSparse(_:)`, which a to-many relationship appends through: the
/// set it leaves is the one `append` leaves, and its storage stays about twice the count or more.
@Suite struct OrderedSetSparseGrowthTests {
    @Test func appendsAsAppendDoesAndKeepsRoomForTwiceTheCount() {
        var sparse = OrderedSet<Int>()
        var plain = OrderedSet<Int>()
        // Every value comes twice, the second time after the set has grown past it.
        let values = (0..<5_000).map { $0 * 7 % 5_003 }
        for (index, value) in (values + values.reversed()).enumerated() {
            #expect(sparse.appendKeepingTableSparse(value) == plain.append(value).inserted)
            if sparse.count > 64 { #expect(sparse.elements.capacity >= 2 * sparse.count - 1, "at \(index)") }
        }
        #expect(sparse == plain)
        #expect(sparse.count == 5_000)
        for value in values { #expect(sparse.contains(value)) }
        #expect(!sparse.contains(5_003))
    }

    @Test func aToManyRelationshipFilledThroughItsInverseRoundTrips() throws {
        let folder = TemporaryFolder()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let count = 3_000
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "Research"
            for index in 0..<count {
                let employee = Employee(context: context)
                employee.name = "E\(index)"
                employee.department = department
                // Setting it again adds nothing.
                employee.department = department
            }
            #expect(department.employees.count == count)
            try context.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let department = try #require(try reader.fetch(FetchRequest<Department>(entityName: "Department")).first)
            #expect(Set(department.employees.map(\.name)) == Set((0..<count).map { "E\($0)" }))
        }
        try reopened.close()
    }
}
