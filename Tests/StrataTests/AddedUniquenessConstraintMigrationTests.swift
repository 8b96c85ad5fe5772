import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// A lightweight migration that adds a uniqueness constraint, made on the store itself: the
/// stored objects are checked for duplicates first (a duplicate fails with
/// `migrationConstraintViolation` and leaves the store as it was), the log is not rewritten, IDs,
/// URIs and history are kept, and afterwards a save that violates the constraint conflicts as it
/// does in a store created with the new model.
@Suite struct AddedUniquenessConstraintMigrationTests {
    typealias Filled = InPlaceMigrationTests.Filled

    /// The first version with `constraint` added to employees, and `extra` attributes.
    static func constrained(_ constraint: [String], extra: [AttributeDescription] = []) -> ManagedObjectModel {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        employee.properties += extra
        employee.uniquenessConstraints = [constraint]
        return model
    }

    /// Saves a new employee named `name` with salary `salary` in its own save; returns the error
    /// code of the save, or `nil` when it saved.
    static func saveEmployee(_ name: String, salary: Int64, in container: PersistentContainer) -> CoreDataError.Code? {
        let context = container.newBackgroundContext()
        return context.performAndWait {
            let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue(name, forKey: "name")
            employee.setValue(salary, forKey: "salary")
            do {
                try context.save()
                return nil
            } catch {
                return (error as? CoreDataError)?.code ?? .coreData
            }
        }
    }

    /// The error codes of saving a duplicate name, then a new name, in a store created with `model`.
    static func referenceCodes(_ model: ManagedObjectModel) throws -> [CoreDataError.Code?] {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store(), model: model)
        defer { try? container.close() }
        #expect(saveEmployee("E3", salary: 1, in: container) == nil)
        return [saveEmployee("E3", salary: 2, in: container), saveEmployee("fresh", salary: 3, in: container)]
    }

    /// The store files' contents by name (manifest, metadata, segments), to tell that nothing changed.
    static func files(_ url: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name != "lock" {
            var isDirectory: ObjCBool = false
            let path = url.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }

    @Test func aConstraintOnAnUnindexedAttributeMigratesInPlace() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let model = Self.constrained(["name"])
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .inPlace)

        let container = try PersistentHistoryTests.container(at: url, model: model)
        #expect(try InPlaceMigrationTests.keepsSegments(url, filled), "the log was not rewritten")
        try InPlaceMigrationTests.expectEmployees(in: container, filled, hasNotes: true, level: nil)
        let later = try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container)
        #expect(later.first?.changes?.first?.changedObjectID.uriRepresentation() == filled.uris["E0"])
        let expected = try Self.referenceCodes(model)
        #expect(expected[0] == .managedObjectConstraintMerge)
        #expect(
            [Self.saveEmployee("E3", salary: 2, in: container), Self.saveEmployee("fresh", salary: 3, in: container)]
                == expected)
        try container.close()

        let reopened = try PersistentHistoryTests.container(at: url, model: model)
        try InPlaceMigrationTests.expectEmployees(in: reopened, filled, hasNotes: true, level: nil)
        #expect(Self.saveEmployee("E7", salary: 4, in: reopened) == .managedObjectConstraintMerge)
        #expect(
            Self.saveEmployee("fresh", salary: 5, in: reopened) == .managedObjectConstraintMerge,
            "saved before the reopen")
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aConstraintOnAnIndexedAttributeRewritesOnlyTheMetadata() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let model = Self.constrained(["salary"])
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .metadataOnly)

        let container = try PersistentHistoryTests.container(at: url, model: model)
        try InPlaceMigrationTests.expectEmployees(in: container, filled, hasNotes: true, level: nil)
        #expect(Self.saveEmployee("new", salary: 20, in: container) == .managedObjectConstraintMerge)
        #expect(Self.saveEmployee("new", salary: 21, in: container) == nil)
        try container.close()
    }

    /// Each constraint the first version's employees violate, with the text the error must hold.
    static func violated() -> [(constraint: [String], extra: [AttributeDescription], mentions: [String])] {
        [
            (["active"], [], ["Employee", "(active)", "active = true"]),
            (["department"], [], ["Employee", "(department)", "department = object"]),
            (
                ["name", "code"], [AttributeDescription.string("code", defaultValue: "x")],
                ["(name, code)", "name = \"E1\", code = \"x\""]
            ),
            (
                ["name", "code"], [AttributeDescription.string("code", defaultValue: "x", isOptional: true)],
                ["(name, code)", "name = \"E1\", code = \"x\""]
            ),
        ]
    }

    @Test(arguments: 0..<4) func storedDuplicatesFailTheMigrationAndLeaveTheStore(_ index: Int) throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        // A duplicate name, for the constraint on (name, code): every object reads the code's default.
        if index >= 2 {
            let container = try PersistentHistoryTests.container(at: url)
            #expect(Self.saveEmployee("E1", salary: 0, in: container) == nil)
            try container.close()
        }
        let before = try Self.files(url)
        let (constraint, extra, mentions) = Self.violated()[index]
        let model = Self.constrained(constraint, extra: extra)

        for _ in 0..<2 {
            let error = try #require(throws: CoreDataError.self) {
                try PersistentHistoryTests.container(at: url, model: model)
            }
            #expect(error.code == .migrationConstraintViolation)
            #expect(error.code.rawValue == MigrationConstraintViolationError)
            for text in mentions { #expect(error.message.contains(text), "\(error.message)") }
            #expect(try Self.files(url) == before, "the store is unchanged")
        }
        let old = try PersistentHistoryTests.container(at: url)
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
    }

    /// The first version with employees' `name` renamed `fullName` and unique.
    static func renamedUnique() -> ManagedObjectModel {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        let name = employee.propertiesByName["name"]!
        name.name = "fullName"
        name.renamingIdentifier = "name"
        employee.uniquenessConstraints = [["fullName"]]
        return model
    }

    @Test func aConstraintAddedWithARenameRewritesInPlace() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let model = Self.renamedUnique()
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .inPlaceRewrite)
        let container = try PersistentHistoryTests.container(at: url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<InPlaceMigrationTests.employeeCount {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
                #expect(try context.existingObject(with: id).value(forKey: "fullName") as? String == "E\(i)")
            }
            let twin = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            twin.setValue("E9", forKey: "fullName")
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .managedObjectConstraintMerge)
        }
        try container.close()
    }

    @Test func aDuplicateFailsARewriteInPlaceBeforeItWrites() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let container = try PersistentHistoryTests.container(at: url)
        #expect(Self.saveEmployee("E4", salary: 1, in: container) == nil)
        try container.close()
        let before = try Self.files(url)
        let error = try #require(throws: CoreDataError.self) {
            try PersistentHistoryTests.container(at: url, model: Self.renamedUnique())
        }
        #expect(error.code == .migrationConstraintViolation)
        #expect(error.message.contains("(fullName)") && error.message.contains("fullName = \"E4\""), "\(error.message)")
        #expect(try Self.files(url) == before)
        let old = try PersistentHistoryTests.container(at: url)
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
    }

    @Test func aDuplicateUnderAnIndexedAttributeFailsTheMetadataOnlyStep() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let container = try PersistentHistoryTests.container(at: url)
        #expect(Self.saveEmployee("twin", salary: 20, in: container) == nil)
        try container.close()
        let before = try Self.files(url)
        let error = try #require(throws: CoreDataError.self) {
            try PersistentHistoryTests.container(at: url, model: Self.constrained(["salary"]))
        }
        #expect(error.code == .migrationConstraintViolation)
        #expect(error.message.contains("salary = 20"), "\(error.message)")
        #expect(try Self.files(url) == before)
        let old = try PersistentHistoryTests.container(at: url)
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
    }
}

extension AttributeDescription {
    /// A string attribute named `name` with a default value, required unless `isOptional`.
    fileprivate static func string(
        _ name: String, defaultValue: String, isOptional: Bool = false
    ) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: .string)
        attribute.isOptional = isOptional
        attribute.defaultValue = defaultValue
        return attribute
    }
}
