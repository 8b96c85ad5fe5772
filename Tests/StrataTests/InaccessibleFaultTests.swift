import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Faults whose rows another context deleted: deleted objects with zero values, or an error.
@Suite struct InaccessibleFaultTests {
    /// Bob, fetched as a fault by `reader`, then deleted and saved by another context.
    static func deletedFault(_ container: PersistentContainer, reader: ManagedObjectContext) throws -> Employee {
        try QueryGenerationTests.seed(container)
        let bob = try reader.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(key: "name", .equalTo, "Bob")
            request.includesPropertyValues = false
            return try #require(try reader.fetch(request).first)
        }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(key: "name", .equalTo, "Bob")
            writer.delete(try #require(try writer.fetch(request).first))
            try writer.save()
        }
        return bob
    }

    @Test func anInaccessibleFaultBecomesADeletedObjectThatTheNextSaveDiscards() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        #expect(reader.shouldDeleteInaccessibleFaults)
        let bob = try Self.deletedFault(container, reader: reader)
        try reader.performAndWait { () throws -> Void in
            #expect(bob.isFault)
            #expect(bob.salary == 0 && !bob.active && bob.department == nil)
            #expect(bob.value(forKey: "name") == nil)
            #expect(bob.isDeleted && reader.deletedObjects == [bob] && reader.hasChanges)
            // The mandatory name is nil, yet the save does not validate the object, and deletes nothing.
            try reader.save()
            #expect(reader.deletedObjects.isEmpty && !reader.hasChanges)
        }
        let check = container.newBackgroundContext()
        let names = try check.performAndWait { try check.fetch(QueryGenerationTests.byName()).map(\.name) }
        #expect(names == ["Ada", "Cy"])
    }

    @Test func withTheOptionOffFiringTheFaultThrows() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        reader.shouldDeleteInaccessibleFaults = false
        let bob = try Self.deletedFault(container, reader: reader)
        reader.performAndWait {
            #expect {
                try bob.value(forCheckedKey: "salary")
            } throws: { error in
                (error as? CoreDataError)?.code == .coreData
            }
            #expect(!bob.isDeleted && reader.deletedObjects.isEmpty && !reader.hasChanges)
        }
    }

    @Test func resetDiscardsAnInaccessibleFault() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        let bob = try Self.deletedFault(container, reader: reader)
        try reader.performAndWait { () throws -> Void in
            #expect(bob.salary == 0 && reader.hasChanges)
            reader.reset()
            #expect(!reader.hasChanges && reader.registeredObjects.isEmpty)
            #expect(try reader.count(for: Employee.fetchRequest()) == 2)
        }
    }
}
