import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Batch requests executed by a context pinned to an older query generation: they find their
/// objects as the context reads them, but write from the rows as they are stored now, so no
/// change saved since the pin is lost, and an object deleted since is not deleted again.
@Suite struct BatchRequestPinnedReadTests {
    /// Sets Bob's notes to `notes` and saves, from a context of its own.
    static func setBobsNotes(_ notes: String, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "Bob")
            try #require(try context.fetch(request).first).notes = notes
            try context.save()
        }
    }

    @Test func aBatchUpdateFromAPinnedContextKeepsWhatWasSavedSinceThePin() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        let ids = try BatchDeleteRequestTests.seed(container)
        let pinned = container.newBackgroundContext()
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        try Self.setBobsNotes("promoted", in: container)

        let request = BatchUpdateRequest(entityName: "Employee")
        request.predicate = try FetchPredicate(checkedFormat: "salary >= 100")
        request.propertiesToUpdate = ["salary": 500]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try pinned.performAndWait { try pinned.execute(request) } as? BatchUpdateResult)
        #expect(
            Set(try #require(result.result as? [ManagedObjectID]))
                == Set(ids.filter { ["Ann", "Bob", "Cy"].contains($0.key) }.values))

        try container.close()
        container = try GraphModel.container(at: folder.store())
        #expect(try BatchUpdateRequestTests.salaries(in: container) == ["Ann": 500, "Bob": 500, "Cy": 500])
        let reader = container.newBackgroundContext()
        let notes = try reader.performAndWait { (try reader.existingObject(with: ids["Bob"]!) as! Employee).notes }
        #expect(notes == "promoted")
    }

    @Test func aBatchDeleteFromAPinnedContextSkipsObjectsDeletedSinceThePin() throws {
        let folder = TemporaryDirectory()
        var container = try GraphModel.container(at: folder.store())
        let ids = try BatchDeleteRequestTests.seed(container)
        let pinned = container.newBackgroundContext()
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            other.delete(try other.existingObject(with: ids["Ann"]!))
            try other.save()
        }

        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = try FetchPredicate(checkedFormat: "salary <= 200")
        let request = BatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .resultTypeObjectIDs
        let result = try #require(try pinned.performAndWait { try pinned.execute(request) } as? BatchDeleteResult)
        #expect(try #require(result.result as? [ManagedObjectID]) == [ids["Bob"]!])

        try container.close()
        container = try GraphModel.container(at: folder.store())
        #expect(try BatchUpdateRequestTests.salaries(in: container) == ["Cy": 300])
    }
}
