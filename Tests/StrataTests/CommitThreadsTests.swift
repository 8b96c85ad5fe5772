import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `PersistentStoreOptionKey.commitThreads` bounds the threads of a large save; every bound
/// stores the same objects.
@Suite struct CommitThreadsTests {
    @Test(arguments: [1, 2, 3]) func aBulkSaveStoresTheSameObjectsOnAnyNumberOfThreads(_ threads: Int) throws {
        let folder = TemporaryDirectory()
        let count = 9_000
        func container() throws -> PersistentContainer {
            let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
            let description = PersistentStoreDescription(url: folder.store())
            description.setOption(threads as NSNumber, forKey: PersistentStoreOptionKey.commitThreads)
            container.persistentStoreDescriptions = [description]
            var loadError: Error?
            container.loadPersistentStores { _, error in loadError = error }
            if let loadError { throw loadError }
            return container
        }
        let writer = try container()
        #expect(
            writer.persistentStoreCoordinator.persistentStores.first?.engineStore?.configuration.commitThreads
                == threads)
        let context = writer.newBackgroundContext()
        try context.performAndWait {
            for n in 0..<count {
                let employee = Employee(context: context)
                employee.name = "E\(n)"
                employee.salary = Int64(n)
            }
            try context.save()
        }
        try writer.close()
        let reader = try container()
        let readerContext = reader.newBackgroundContext()
        try readerContext.performAndWait {
            let context = readerContext
            #expect(try context.count(for: Employee.fetchRequest()) == count)
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(format: "name == %@", "E8999")
            #expect(try context.fetch(request).first?.salary == 8_999)
            let sum = try context.fetch(Employee.fetchRequest()).reduce(Int64(0)) { $0 + $1.salary }
            #expect(sum == Int64(count * (count - 1) / 2))
        }
        try reader.close()
    }
}
