import Foundation
@testable import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc

/// Objects loaded from an engine store, and the row cache, keep the row as its encoded bytes
/// (a few dozen bytes, strings included: in a heap block of its own, sharing one of about 4 KiB
/// with the other rows of a fetch, or in place in the decoded block when the fetch takes most of
/// its rows), whichever way they were loaded: a fetch that scans, a
/// fetch through a fetch index with a residual test, a fault, a prefetch.
/// The values read from them are those saved, also after the row changed and the object was
/// refreshed; an in-memory store's objects keep the rows it holds.
@Suite struct EncodedSnapshotTests {
    /// The encoded row `object` holds, or `nil` when it holds none or a decoded one.
    static func encodedRow(of object: ManagedObject) -> EncodedRow? {
        guard case .encoded(let row) = object.lazyRow?.row else { return nil }
        return row
    }

    /// glibc's `malloc_usable_size`, looked up at run time (it is not in the `Glibc` module).
    static func usableSize() throws -> @convention(c) (UnsafeMutableRawPointer?) -> Int {
        let symbol = try #require(dlsym(dlopen(nil, RTLD_NOW), "malloc_usable_size"))
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
    }

    /// Saves `count` employees (`e0`, `e1`, ...: salary 1000 × i, notes of 120 bytes, every
    /// third inactive) in one department.
    static func seed(_ container: PersistentContainer, count: Int) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "Research"
            for index in 0..<count {
                let employee = Employee(context: context)
                employee.name = "e\(index)"
                employee.salary = Int64(index) * 1000
                employee.active = index % 3 != 0
                employee.notes = String(repeating: "n\(index % 10)", count: 60)
                employee.department = department
            }
            try context.save()
        }
    }

    @Test func fetchedFaultedAndPrefetchedObjectsKeepOneSmallEncodedRow() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seed(container, count: 40)
        let usableSize = try Self.usableSize()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            // A scan of every row: the rows stay in place in their decoded blocks, those of one
            // block sharing one heap block of their column offsets.
            let all = try context.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(all.count == 40)
            let rows = try all.map { try #require(Self.encodedRow(of: $0)) }
            for rowsOfStorage in Dictionary(grouping: rows, by: { ObjectIdentifier($0.storage) }).values {
                let storage = rowsOfStorage[0].storage
                let block = try #require(storage.header.block, "a row of a full scan kept in place")
                #expect(rowsOfStorage.allSatisfy { $0.storage.header.block === block })
                #expect(Set(rowsOfStorage.map(\.start)).count == rowsOfStorage.count, "each row in its own slot")
                // The object header and the header (32 bytes), then 2 bytes a stored column a
                // slot; malloc may hand out up to 46 bytes more than asked for.
                let offsets = 2 * storage.header.format.codec.storedColumns * block.rowCount
                let size = usableSize(Unmanaged.passUnretained(storage).toOpaque())
                #expect(size >= 32 + offsets && size <= 32 + offsets + 46)
            }
            for (employee, row) in zip(all, rows) {
                #expect(row.footprint <= row.byteCount + 1 + 2 * row.count)
                #expect(row.byteCount < 160, "bitmap, tag, name, salary, flag, 120 bytes of notes, reference")
                let index = Int(employee.salary / 1000)
                #expect(employee.name == "e\(index)")
                #expect(employee.notes == String(repeating: "n\(index % 10)", count: 60))
                #expect(employee.active == (index % 3 != 0))
                #expect(employee.department?.name == "Research")
            }
        }
        let single = container.newBackgroundContext()
        try single.performAndWait {
            // A fetch taking one row of its block (a test on the name): the row is copied, into a
            // shared heap block of about 4 KiB (the object header and the header, 32 bytes, then
            // the rows), not kept in place.
            let request = FetchRequest<Employee>(entityName: "Employee")
            request.predicate = FetchPredicate(key: "name", .equalTo, "e7")
            let row = try #require(try single.fetch(request).first.flatMap(Self.encodedRow))
            #expect(row.storage.header.block == nil)
            let size = usableSize(Unmanaged.passUnretained(row.storage).toOpaque())
            #expect(size >= 32 + EncodedRowArena.blockCapacity && size <= 32 + EncodedRowArena.blockCapacity + 46)
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            // A walk of the salary index with a residual test on `active`, top 5.
            let request = FetchRequest<Employee>(entityName: "Employee")
            request.predicate = FetchPredicate(andPredicateWithSubpredicates: [
                FetchPredicate(key: "salary", .greaterThan, Int64(10_000)),
                FetchPredicate(key: "active", .equalTo, true),
            ])
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
            request.fetchLimit = 5
            let top = try other.fetch(request)
            #expect(top.map(\.name) == ["e38", "e37", "e35", "e34", "e32"])
            #expect(top.allSatisfy { Self.encodedRow(of: $0) != nil })
            // A fault by ID, then the row cache holds the row encoded.
            let id = try #require(top.first?.department?.objectID)
            let department = try #require(try other.existingObject(with: id) as? Department)
            #expect(department.name == "Research" && department.budget == 0)
            #expect(Self.encodedRow(of: department) != nil)
            // A prefetch of the department's employees.
            let prefetching = FetchRequest<Department>(entityName: "Department")
            prefetching.relationshipKeyPathsForPrefetching = ["employees"]
            let departments = try other.fetch(prefetching)
            let employees = try #require(departments.first?.employees)
            #expect(employees.count == 40)
            #expect(employees.allSatisfy { !$0.isFault && Self.encodedRow(of: $0) != nil })
        }
        try container.close()
    }

    @Test func aFaultReadsTheRowCacheAndARefreshSeesTheNewRow() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        try Self.seed(container, count: 3)
        let reader = container.newBackgroundContext()
        let ids = try reader.performAndWait {
            try reader.fetch(FetchRequest<Employee>(entityName: "Employee")).sorted { $0.name < $1.name }.map(
                \.objectID)
        }
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        try first.performAndWait {
            let employee = try #require(try first.existingObject(with: ids[1]) as? Employee)
            #expect(Self.encodedRow(of: employee) != nil)
            #expect(employee.salary == 1000)
        }
        // The second context's fault is served by the coordinator's row cache.
        try second.performAndWait {
            let employee = try #require(try second.existingObject(with: ids[1]) as? Employee)
            #expect(employee.salary == 1000 && employee.name == "e1")
            try first.performAndWait {
                let changed = try #require(try first.existingObject(with: ids[1]) as? Employee)
                changed.salary = 5_555
                changed.notes = "é changed"
                try first.save()
            }
            #expect(employee.salary == 1000, "no refresh yet: the snapshot the object was loaded from")
            second.refresh(employee, mergeChanges: false)
            #expect(employee.salary == 5_555)
            #expect(employee.notes == "é changed")
            #expect(Self.encodedRow(of: employee) != nil)
        }
        try container.close()
        // After a reopen, the rows read back encoded from the log.
        let reopened = try GraphModel.container(at: folder.store())
        let context = reopened.newBackgroundContext()
        try context.performAndWait {
            let employees = try context.fetch(FetchRequest<Employee>(entityName: "Employee")).sorted {
                $0.name < $1.name
            }
            #expect(employees.map(\.salary) == [0, 5_555, 2_000])
            #expect(employees[1].notes == "é changed")
        }
        try reopened.close()
    }

    @Test func anInMemoryStoresObjectsKeepItsRows() throws {
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription()
        description.type = InMemoryStoreType
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        try Self.seed(container, count: 2)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employees = try context.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(Set(employees.map(\.name)) == ["e0", "e1"])
            for employee in employees {
                guard case .decoded = employee.lazyRow?.row else {
                    Issue.record("an in-memory store's object holds \(String(describing: employee.lazyRow?.row))")
                    continue
                }
            }
        }
    }
}
#endif
