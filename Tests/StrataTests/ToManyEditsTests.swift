import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A to-many relationship that is still a fault stays one when its inverse to-one changes on
/// other objects: what it then holds is what the store holds with those changes applied, before
/// and after a save, after a reopen, and beside another context's saves.
@Suite struct ToManyEditsTests {
    /// The names of the files `folder` holds, read through the relationship.
    static func names(_ folder: FaultFolder) -> Set<String> { Set(folder.files.map(\.name)) }

    /// The object `id` names in `context`, of type `T`.
    static func object<T: ManagedObject>(_ id: ManagedObjectID?, in context: ManagedObjectContext) throws -> T {
        let id = try #require(id)
        return try #require(context.object(with: id) as? T)
    }

    /// Files added, moved and deleted leave the folders' relationships faults; reading them gives
    /// the stored files with the changes; the save, a fresh context and a reopened store agree.
    @Test func inverseChangesLeaveTheRelationshipAFault() throws {
        let directory = TemporaryDirectory()
        var container = try GraphModel.container(at: directory.store(), model: FaultingTests.model())
        let ids = try FaultingTests.seed(container)
        let context = container.newBackgroundContext()
        let archiveID = try context.performAndWait {
            let archive = FaultFolder(context: context)
            archive.name = "archive"
            try context.save()
            return archive.objectID
        }
        try context.performAndWait {
            let docs = try Self.object(ids.folder, in: context) as FaultFolder
            let archive = try Self.object(archiveID, in: context) as FaultFolder
            let added = FaultFile(context: context)
            added.name = "d.txt"
            added.folder = docs
            let moved = try Self.object(ids.files["a.txt"], in: context) as FaultFile
            moved.folder = archive
            context.delete(try Self.object(ids.files["b.txt"], in: context) as FaultFile)
            context.processPendingChanges()
            #expect(docs.hasFault(forRelationshipNamed: "files"), "changing the inverse leaves the relationship a fault")
            #expect(archive.hasFault(forRelationshipNamed: "files"))
            #expect(context.updatedObjects.contains(docs) && context.updatedObjects.contains(archive))
            #expect(docs.changedValues().keys.contains("files"))
            #expect(Self.names(docs) == ["c.txt", "d.txt"], "the stored files less the moved and deleted, and the new")
            #expect(!docs.hasFault(forRelationshipNamed: "files"))
            try context.save()
            #expect(archive.hasFault(forRelationshipNamed: "files"), "saved, the store answers the relationship")
            #expect(Self.names(archive) == ["a.txt"])
            #expect(!archive.files.contains { $0.objectID.isTemporaryID })
            #expect(Self.names(docs) == ["c.txt", "d.txt"])
        }
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            let docs = try Self.object(ids.folder, in: fresh) as FaultFolder
            #expect(Self.names(docs) == ["c.txt", "d.txt"])
            let archive: FaultFolder = try Self.object(archiveID, in: fresh)
            #expect(Self.names(archive) == ["a.txt"])
        }
        try container.close()

        container = try GraphModel.container(at: directory.store(), model: FaultingTests.model())
        let reopened = container.newBackgroundContext()
        try reopened.performAndWait {
            let folders = try reopened.fetch(FaultFolder.fetchRequest())
            let byName = Dictionary(uniqueKeysWithValues: folders.map { ($0.name, Self.names($0)) })
            #expect(byName == ["docs": ["c.txt", "d.txt"], "archive": ["a.txt"]])
            #expect(try reopened.count(for: FaultFile.fetchRequest()) == 3)
        }
        try container.close()
    }

    /// A file moved in and out again, and one moved out and back, leave the folder as stored.
    @Test func editsThatUndoEachOtherLeaveTheStoredFiles() throws {
        let directory = TemporaryDirectory()
        let container = try GraphModel.container(at: directory.store(), model: FaultingTests.model())
        let ids = try FaultingTests.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let docs = try Self.object(ids.folder, in: context) as FaultFolder
            let other = FaultFolder(context: context)
            other.name = "other"
            let a = try Self.object(ids.files["a.txt"], in: context) as FaultFile
            a.folder = other
            a.folder = docs
            let extra = FaultFile(context: context)
            extra.name = "e.txt"
            extra.folder = docs
            extra.folder = other
            #expect(docs.hasFault(forRelationshipNamed: "files"))
            #expect(Self.names(docs) == ["a.txt", "b.txt", "c.txt"])
            #expect(Self.names(other) == ["e.txt"])
            try context.save()
        }
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            let docs: FaultFolder = try Self.object(ids.folder, in: fresh)
            #expect(Self.names(docs) == ["a.txt", "b.txt", "c.txt"])
        }
        try container.close()
    }

    /// The relationship read after another context saved a file into the folder holds that file
    /// and this context's own unsaved file; a rollback leaves the stored files.
    @Test func theFirstReadSeesTheStoreThenAndTheEdits() throws {
        let directory = TemporaryDirectory()
        let container = try GraphModel.container(at: directory.store(), model: FaultingTests.model())
        let ids = try FaultingTests.seed(container)
        let context = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        try context.performAndWait {
            let docs = try Self.object(ids.folder, in: context) as FaultFolder
            let mine = FaultFile(context: context)
            mine.name = "mine.txt"
            mine.folder = docs
            try other.performAndWait {
                let theirs = FaultFile(context: other)
                theirs.name = "theirs.txt"
                theirs.folder = try Self.object(ids.folder, in: other) as FaultFolder
                try other.save()
            }
            #expect(Self.names(docs) == ["a.txt", "b.txt", "c.txt", "mine.txt", "theirs.txt"])
            context.rollback()
            #expect(Self.names(docs) == ["a.txt", "b.txt", "c.txt", "theirs.txt"])
        }
        try container.close()
    }

    /// With an undo manager the context loads the relationship as it changes (undo records its
    /// values), and undoing a move gives the stored files back.
    @Test func withUndoTheRelationshipIsLoaded() throws {
        let directory = TemporaryDirectory()
        let container = try GraphModel.container(at: directory.store(), model: FaultingTests.model())
        let ids = try FaultingTests.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.undoManager = UndoManager()
            let docs = try Self.object(ids.folder, in: context) as FaultFolder
            let added = FaultFile(context: context)
            added.name = "d.txt"
            added.folder = docs
            #expect(!docs.hasFault(forRelationshipNamed: "files"))
            context.processPendingChanges()
            context.undoManager?.undo()
            #expect(Self.names(docs) == ["a.txt", "b.txt", "c.txt"])
        }
        try container.close()
    }
}
