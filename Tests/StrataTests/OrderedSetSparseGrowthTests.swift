import OrderedCollections
import StrataTestSupport
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
        let folder = TemporaryDirectory()
        let count = 3_000
        // Each employee's department set through the to-one side, the department's set growing
        // through the inverse.
        let writer = try GraphModel.container(at: folder.store())
        try EncodedSnapshotTests.seed(writer, count: count)
        try writer.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let department = try #require(try reader.fetch(FetchRequest<Department>(entityName: "Department")).first)
            #expect(department.employees.count == count)
            #expect(Set(department.employees.map(\.name)) == Set((0..<count).map { "e\($0)" }))
        }
        try reopened.close()
    }
}
