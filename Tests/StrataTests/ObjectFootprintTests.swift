import Foundation
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc

/// What each object a fetch registers keeps on the heap besides its row: one block for the
/// object and one for its ID, the smallest glibc blocks their stored properties fit in. A
/// stored property added or moved that grows either block shows here, and in W6's peak memory.
@Suite struct ObjectFootprintTests {
    @Test func aFetchedObjectAndItsIDEachTakeOneSmallHeapBlock() throws {
        let folder = TemporaryFolder()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employee = Employee(context: context)
            employee.name = "Ada"
            employee.salary = 120_000
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let fetched = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            let employee = try #require(fetched.first)
            #expect(employee.name == "Ada")
            #expect(!employee.objectID.isTemporaryID)
            // Usable sizes of glibc's 160- and 64-byte blocks.
            let usableSize = try Self.usableSize()
            #expect(usableSize(Unmanaged.passUnretained(employee).toOpaque()) <= 152)
            #expect(usableSize(Unmanaged.passUnretained(employee.objectID).toOpaque()) <= 56)
        }
        try container.close()
    }

    /// glibc's `malloc_usable_size`, looked up at run time (it is not in the `Glibc` module).
    private static func usableSize() throws -> @convention(c) (UnsafeMutableRawPointer?) -> Int {
        let symbol = try #require(dlsym(dlopen(nil, RTLD_NOW), "malloc_usable_size"))
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
    }
}
#endif
