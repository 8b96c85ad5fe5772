import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `refreshAllObjects()` and `stalenessInterval`: what a context reads again, and what it keeps.
@Suite struct RefreshAllObjectsTests {
    /// Ada as `reader` has her realized, after another context saved her raise to 150.
    static func realizedThenChangedElsewhere(
        _ container: PersistentContainer, reader: ManagedObjectContext
    ) throws -> Employee {
        try QueryGenerationTests.seed(container)
        let ada = try reader.performAndWait { try #require(try reader.fetch(QueryGenerationTests.byName()).first) }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            try #require(try writer.fetch(QueryGenerationTests.byName()).first).salary = 150
            try writer.save()
        }
        return ada
    }

    @Test func changedObjectsKeepTheirChangesAndTheOthersBecomeFaults() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        try QueryGenerationTests.seed(container)
        let (ada, bob, eve) = try reader.performAndWait {
            let everyone = try reader.fetch(QueryGenerationTests.byName())
            everyone[0].notes = "unsaved"
            let eve = Employee(context: reader)
            eve.name = "Eve"
            return (everyone[0], everyone[1], eve)
        }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            let everyone = try writer.fetch(QueryGenerationTests.byName())
            everyone[0].salary = 150
            everyone[1].salary = 250
            try writer.save()
        }
        try reader.performAndWait {
            #expect(ada.salary == 100 && bob.salary == 200)
            reader.refreshAllObjects()
            #expect(!ada.isFault && ada.notes == "unsaved" && ada.salary == 150 && ada.hasChanges)
            #expect(bob.isFault)
            #expect(bob.salary == 250 && !bob.hasChanges)
            #expect(eve.isInserted && eve.name == "Eve")
            try reader.save()
        }
        let check = container.newBackgroundContext()
        let saved = try check.performAndWait {
            try check.fetch(QueryGenerationTests.byName()).map { "\($0.name) \($0.salary) \($0.notes ?? "-")" }
        }
        #expect(saved == ["Ada 150 unsaved", "Bob 250 -", "Cy 300 -", "Eve 0 -"])
    }

    @Test(arguments: [-1.0, 0.0, 3600.0])
    func aRefreshedObjectReadsTheStoreWhateverTheStalenessInterval(interval: TimeInterval) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        reader.stalenessInterval = interval
        let ada = try Self.realizedThenChangedElsewhere(container, reader: reader)
        reader.performAndWait {
            #expect(ada.salary == 100)
            reader.refresh(ada, mergeChanges: false)
            #expect(ada.isFault && ada.salary == 150)
            #expect(reader.stalenessInterval == interval)
        }
    }
}
