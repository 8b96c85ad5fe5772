import Foundation
import StrataTestSupport
import Testing
@testable import Strata

@Suite struct ObjectGraphSmokeTests {
    @Test func createSaveReopenFetchFaultAndRelate() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let research = Department(context: context)
                research.name = "Research"
                research.budget = 1e6
                for index in 0..<10 {
                    let employee = Employee(context: context)
                    employee.name = "Employee \(index)"
                    employee.salary = Int64(50_000 + index * 10_000)
                    employee.department = research
                }
                #expect(research.employees.count == 10)
                #expect(context.insertedObjects.count == 11)
                try context.save()
                #expect(!context.hasChanges)
                #expect(!research.objectID.isTemporaryID)
            }
            try container.persistentStoreCoordinator.persistentStores.forEach {
                try container.persistentStoreCoordinator.remove($0)
            }
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(key: "salary", .greaterThanOrEqualTo, 100_000)
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
            let rich = try context.fetch(request)
            #expect(rich.map(\.salary) == [140_000, 130_000, 120_000, 110_000, 100_000])
            let department = try #require(rich.first?.department)
            #expect(department.isFault)
            #expect(department.name == "Research")
            #expect(!department.isFault)
            #expect(department.employees.count == 10)
            context.delete(department)
            try context.save()
            #expect(try context.count(for: Employee.fetchRequest()) == 0)
        }
    }
}
