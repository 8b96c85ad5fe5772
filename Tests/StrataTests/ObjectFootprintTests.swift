import Foundation
import StrataTestSupport
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc

/// What each object a fetch registers keeps on the heap besides its row: one block for the
/// object and one for its ID, the smallest glibc blocks their stored properties fit in. A
/// stored property added or moved that grows either block shows here, and in W6's peak memory.
///
/// glibc may hand a request a larger free block when splitting it would leave a remainder too
/// small to keep, so one object's block can be larger than its request; the smallest block of
/// many fetched objects is the one the request itself needs.
@Suite struct ObjectFootprintTests {
    @Test func aFetchedObjectAndItsIDEachTakeOneSmallHeapBlock() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<64 {
                let employee = Employee(context: context)
                employee.name = "Ada \(index)"
                employee.salary = 120_000
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let fetched = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(fetched.count == 64)
            #expect(fetched.allSatisfy { $0.name.hasPrefix("Ada") })
            #expect(fetched.allSatisfy { !$0.objectID.isTemporaryID })
            // Usable sizes of glibc's 160- and 64-byte blocks.
            let usableSize = try EncodedSnapshotTests.usableSize()
            let objectBlock = fetched.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }.min()
            let idBlock = fetched.map { usableSize(Unmanaged.passUnretained($0.objectID).toOpaque()) }.min()
            #expect(try #require(objectBlock) <= 152)
            #expect(try #require(idBlock) <= 56)
        }
        try container.close()
    }
}
#endif
