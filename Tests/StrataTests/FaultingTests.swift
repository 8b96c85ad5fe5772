import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A folder that counts how often its values are loaded from the store.
final class FaultFolder: ManagedObject {
    @Managed var name: String
    @Managed var files: Set<FaultFile>
    var loads = 0
    override func awakeFromFetch() {
        super.awakeFromFetch()
        loads += 1
    }
}

/// A file that counts how often its values are loaded from the store.
final class FaultFile: ManagedObject {
    @Managed var name: String
    @Managed var size: Int64
    @Managed var folder: FaultFolder?
    var loads = 0
    override func awakeFromFetch() {
        super.awakeFromFetch()
        loads += 1
    }
}

/// Faults: what fires them, what does not, and what happens when their row is gone.
@Suite struct FaultingTests {
    static func model() -> ManagedObjectModel {
        let folder = ModelBuilder.entity("FaultFolder", [ModelBuilder.attribute("name", .string, isOptional: false)])
        let file = ModelBuilder.entity(
            "FaultFile",
            [
                ModelBuilder.attribute("name", .string, isOptional: false),
                ModelBuilder.attribute("size", .integer64, defaultValue: Int64(0)),
            ])
        ModelBuilder.inverse(
            ModelBuilder.relationship("files", from: folder, to: file, toMany: true, deleteRule: .cascadeDeleteRule),
            ModelBuilder.relationship("folder", from: file, to: folder))
        FaultFolder.register(for: "FaultFolder")
        FaultFile.register(for: "FaultFile")
        return ModelBuilder.model([folder, file])
    }

    /// Saves a folder with three files; returns the folder's and the files' IDs (by name).
    static func seed(
        _ container: PersistentContainer
    ) throws -> (folder: ManagedObjectID, files: [String: ManagedObjectID]) {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let folder = FaultFolder(context: context)
            folder.name = "docs"
            var files: [FaultFile] = []
            for (index, name) in ["a.txt", "b.txt", "c.txt"].enumerated() {
                let file = FaultFile(context: context)
                file.name = name
                file.size = Int64(100 * (index + 1))
                file.folder = folder
                files.append(file)
            }
            try context.save()
            return (folder.objectID, Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.objectID) }))
        }
    }

    @Test func objectsFetchedAfterReopenAreRealized() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            _ = try Self.seed(container)
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let files = try context.fetch(FaultFile.fetchRequest())
            #expect(files.count == 3)
            for file in files {
                #expect(!file.isFault)
                #expect(file.faultingState == 0)
                #expect(file.loads == 1, "fetching loads each object once")
            }
            #expect(files.map(\.size).sorted() == [100, 200, 300])
            #expect(files.allSatisfy { $0.loads == 1 }, "reading values of a realized object reads nothing more")
        }
    }

    /// `object(with:)` returns a fault; identity and state accessors leave it a fault; reading a
    /// property fires it once.
    @Test func identityAndStateDoNotFireFaultsButPropertiesDo() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let id = try #require(ids.files["b.txt"])
            let file = try #require(context.object(with: id) as? FaultFile)
            #expect(file.isFault)
            #expect(file.faultingState == 1)
            #expect(file.objectID == id)
            #expect(file.entity.name == "FaultFile")
            #expect(file.managedObjectContext === context)
            #expect(!file.isInserted)
            #expect(!file.isUpdated)
            #expect(!file.isDeleted)
            #expect(!file.hasChanges)
            #expect(file == file)
            #expect(file != context.object(with: try #require(ids.files["a.txt"])))
            var hasher = Hasher()
            file.hash(into: &hasher)
            _ = hasher.finalize()
            #expect(Set([file, file]).count == 1)
            #expect(file.description.contains("fault"))
            #expect(file.description.contains(id.uriRepresentation().absoluteString))
            #expect(context.registeredObject(for: id) === file)
            #expect(context.registeredObjects.contains(file))
            #expect(file.hasFault(forRelationshipNamed: "folder"))
            #expect(file.isFault, "none of the above fires the fault")
            #expect(file.loads == 0)

            #expect(file.name == "b.txt")
            #expect(!file.isFault)
            #expect(file.faultingState == 0)
            #expect(file.loads == 1)
            #expect(file.size == 200)
            #expect(file.folder?.name == "docs")
            #expect(file.loads == 1, "one load fulfills every attribute and to-one relationship")
            #expect(!file.description.contains("<fault>"))
            #expect(file.description.contains("b.txt"))
            #expect(context.object(with: id) === file)
        }
    }

    @Test func untypedValueForKeyFiresTheFaultToo() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let file = context.object(with: try #require(ids.files["c.txt"]))
            #expect(file.isFault)
            #expect(file.value(forKey: "size") as? Int64 == 300)
            #expect(!file.isFault)
            let other = context.object(with: try #require(ids.files["a.txt"]))
            #expect(other.isFault)
            #expect(other.committedValues(forKeys: nil).isEmpty, "a fault has no committed values yet")
            #expect(other.primitiveValue(forKey: "name") as? String == "a.txt")
            #expect(!other.isFault)
        }
    }

    /// A to-many relationship stays a fault of its own until it is read.
    @Test func toManyRelationshipsAreTheirOwnFaults() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let docs = try #require(try context.fetch(FaultFolder.fetchRequest()).first)
            #expect(docs.objectID == ids.folder)
            #expect(!docs.isFault)
            #expect(docs.hasFault(forRelationshipNamed: "files"))
            #expect(docs.description.contains("relationship fault"))
            #expect(context.registeredObjects.count == 1, "realizing the folder does not realize its files")
            let files = docs.files
            #expect(!docs.hasFault(forRelationshipNamed: "files"))
            #expect(files.count == 3)
            #expect(files.allSatisfy { $0.isFault }, "the related objects come back as faults")
            #expect(Set(files.map(\.objectID)) == Set(ids.files.values))
            let a = try #require(files.first { $0.objectID == ids.files["a.txt"] })
            #expect(a.size == 100)
            #expect(!a.isFault)
            #expect(files.filter(\.isFault).count == 2, "only the file read was fired")
        }
        let another = container.newBackgroundContext()
        another.performAndWait {
            let docs = another.object(with: ids.folder)
            let faultHasFault = docs.hasFault(forRelationshipNamed: "files")
            #expect(faultHasFault, "a fault's relationships are faults")
            let fresh = FaultFolder(context: another)
            fresh.name = "new"
            let newHasFault = fresh.hasFault(forRelationshipNamed: "files")
            #expect(!newHasFault, "a new object's relationships are not faults")
        }
    }

    @Test func existingObjectRealizesOrThrows() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let aID = try #require(ids.files["a.txt"])
        let bID = try #require(ids.files["b.txt"])
        let writer = container.newBackgroundContext()
        let unsavedID = try writer.performAndWait {
            writer.delete(writer.object(with: bID))
            try writer.save()
            let unsaved = FaultFile(context: writer)
            unsaved.name = "unsaved"
            return unsaved.objectID
        }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let a = try context.existingObject(with: aID)
            #expect(!a.isFault, "existingObject never returns a fault")
            #expect(a.value(forKey: "name") as? String == "a.txt")
            #expect(context.object(with: aID) === a)

            let missing = #expect(throws: CoreDataError.self) { _ = try context.existingObject(with: bID) }
            #expect(missing?.code == .managedObjectReferentialIntegrity)
            #expect(missing?.objectID == bID)
            #expect(context.registeredObject(for: bID) == nil, "nothing is registered for a missing object")
            let staleFault = context.object(with: bID)
            let stillMissing = #expect(throws: CoreDataError.self) { _ = try context.existingObject(with: bID) }
            #expect(
                stillMissing?.code == .managedObjectReferentialIntegrity,
                "a registered fault of a missing row is no exception")
            #expect(staleFault.isFault)
            #expect(throws: CoreDataError.self) { _ = try context.existingObject(with: unsavedID) }

            let cID = try #require(ids.files["c.txt"])
            let registeredFault = context.object(with: cID)
            #expect(registeredFault.isFault)
            let c = try context.existingObject(with: cID)
            #expect(c === registeredFault)
            #expect(!c.isFault, "a registered fault is fulfilled too")

            let mine = FaultFile(context: context)
            mine.name = "mine"
            #expect(
                try context.existingObject(with: mine.objectID) === mine, "an inserted object is known to its context")
        }
    }

    /// A fault whose context was reset (or released) can no longer be fulfilled: reading it
    /// throws instead of crashing.
    @Test func faultsOutlivingTheirContextThrow() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let fault = context.object(with: try #require(ids.files["a.txt"]))
            let realized = try context.existingObject(with: try #require(ids.files["b.txt"]))
            context.reset()
            #expect(fault.managedObjectContext == nil)
            #expect(fault.isFault)
            let error = #expect(throws: CoreDataError.self) { _ = try fault.value(forCheckedKey: "name") }
            #expect(error?.objectID == ids.files["a.txt"])
            #expect(throws: CoreDataError.self) { try fault.setValue("x", forCheckedKey: "name") }
            #expect(realized.isFault, "reset turns loaded objects into faults, as Core Data's does")
            #expect(throws: CoreDataError.self) { _ = try realized.value(forCheckedKey: "name") }
        }
    }

    /// With `shouldDeleteInaccessibleFaults` (the default), a fault whose row another context
    /// deleted becomes a deleted object with nil values; without it, firing the fault throws.
    @Test func inaccessibleFaultsAreDeletedOrThrow() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let ids = try Self.seed(container)
        let aID = try #require(ids.files["a.txt"])
        let bID = try #require(ids.files["b.txt"])
        let lenient = container.newBackgroundContext()
        let strict = container.newBackgroundContext()
        strict.performAndWait { strict.shouldDeleteInaccessibleFaults = false }
        let lenientFile = lenient.performAndWait { lenient.object(with: aID) }
        let strictFile = strict.performAndWait { strict.object(with: bID) }

        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            writer.delete(writer.object(with: aID))
            writer.delete(writer.object(with: bID))
            try writer.save()
        }

        try lenient.performAndWait {
            #expect(lenient.shouldDeleteInaccessibleFaults)
            #expect(lenientFile.isFault)
            #expect(lenientFile.value(forKey: "name") == nil)
            #expect(lenientFile.value(forKey: "size") == nil)
            #expect(lenientFile.value(forKey: "folder") == nil)
            #expect(lenientFile.isDeleted)
            #expect(lenient.deletedObjects.contains(lenientFile))
            try lenient.save()
            #expect(!lenient.hasChanges)
            #expect(lenient.registeredObject(for: aID) == nil, "the save discards the inaccessible object")
        }
        strict.performAndWait {
            let error = #expect(throws: CoreDataError.self) { _ = try strictFile.value(forCheckedKey: "name") }
            #expect(error?.objectID == bID)
            #expect(strictFile.isFault)
            #expect(!strictFile.isDeleted)
        }
        // The untouched files are still there for everyone.
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let names = try reader.fetch(FaultFile.fetchRequest()).map(\.name)
            #expect(names == ["c.txt"])
        }
    }
}
