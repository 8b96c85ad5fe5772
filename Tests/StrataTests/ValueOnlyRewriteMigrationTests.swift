import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// A lightweight migration that converts stored values but leaves the engine layout as it was
/// (`notes` made required with a default value that fills the employees without notes), made by
/// rewriting the log in place: IDs, URIs and history kept, and its commit point recognised by
/// the rewrite's segments, since the stored schema is the same before and after.
@Suite struct ValueOnlyRewriteMigrationTests {
    typealias Filled = InPlaceMigrationTests.Filled

    /// The first version with `notes` required, default `none`.
    static func notesRequired() -> ManagedObjectModel {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        employee.managedObjectClassName = "ManagedObject"
        let notes = employee.propertiesByName["notes"] as! AttributeDescription
        notes.isOptional = false
        notes.defaultValue = "none"
        return model
    }

    /// Checks every employee, found by its URI from before: its notes, or `none` where it had none.
    static func expectConverted(in container: PersistentContainer, _ filled: Filled) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<InPlaceMigrationTests.employeeCount {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
                let employee = try context.existingObject(with: id)
                #expect(employee.value(forKey: "name") as? String == "E\(i)")
                #expect(employee.value(forKey: "notes") as? String == InPlaceMigrationTests.notes(i) ?? "none")
                #expect(
                    (employee.value(forKey: "department") as? ManagedObject)?.value(forKey: "name") as? String
                        == "D\(i % 3)")
            }
        }
    }

    @Test func aValueOnlyChangeRewritesInPlaceKeepingIDsAndHistory() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let before = try Store.storedSchema(at: url)
        #expect(
            try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: Self.notesRequired()) == .inPlaceRewrite)

        let container = try PersistentHistoryTests.container(at: url, model: Self.notesRequired())
        #expect(try Store.storedSchema(at: url) == before, "the layout is the same")
        #expect(
            Set(try ShopModels.segmentFiles(url).keys).isDisjoint(with: filled.segments.keys), "the log was rewritten")
        try Self.expectConverted(in: container, filled)
        let later = try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container)
        #expect(later.first?.changes?.first?.changedObjectID.uriRepresentation() == filled.uris["E0"])
        try container.close()
        let reopened = try PersistentHistoryTests.container(at: url, model: Self.notesRequired())
        try Self.expectConverted(in: reopened, filled)
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func interruptedBeforeItsManifestLeavesTheOldStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        // A kill after the pending metadata was written, before the manifest: the stored schema
        // already equals the new model's, yet the step did not commit.
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        let next = Int(try Store.logFileIDs(at: url).next)
        try PendingMigrationMetadata.rewrite.writePending(
            destination: Self.notesRequired(),
            metadata: metadata.merging([PendingMigrationMetadata.logFileKey: next]) { _, new in new }, at: url)
        #expect(PendingMigrationMetadata.rewrite.committedMetadata(at: url) == nil)

        let old = try PersistentHistoryTests.container(at: url)
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
    }

    @Test func interruptedAfterItsManifestLeavesTheNewStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let source = GraphModel.make(), destination = Self.notesRequired()
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        let plan = try #require(try InPlaceRewrite.plan(at: url, from: source, to: destination, mapping: mapping))
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        let next = Int(try Store.logFileIDs(at: url).next)
        try PendingMigrationMetadata.rewrite.writePending(
            destination: destination,
            metadata: metadata.merging([PendingMigrationMetadata.logFileKey: next]) { _, new in new }, at: url)
        try Store.rewriteLog(at: url, plan.rewrite)
        #expect(PendingMigrationMetadata.rewrite.committedMetadata(at: url) != nil)

        let new = try PersistentHistoryTests.container(at: url, model: Self.notesRequired())
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        try Self.expectConverted(in: new, filled)
        try new.close()
    }
}
