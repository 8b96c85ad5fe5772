import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// Lightweight migrations that change the engine schema in place: object IDs, history and the
/// log are kept, rows written before read the new attributes as nil or their default.
@Suite struct InPlaceMigrationTests {
    static let employeeCount = 60

    /// What a test keeps of the first version's store: each employee's URI by name, a history
    /// token after the first save, and the store's segment files.
    struct Filled {
        var uris: [String: URL] = [:]
        var token: PersistentHistoryToken
        var segments: [String: Int]
    }

    /// Employee `i`'s notes (every other one has some).
    static func notes(_ i: Int) -> String? { i.isMultiple(of: 2) ? "notes \(i)" : nil }

    /// Writes three departments and 60 employees with the first version, then a second save
    /// after the token; closes the store.
    static func fill(_ url: URL) throws -> Filled {
        let container = try PersistentHistoryTests.container(at: url)
        let context = container.newBackgroundContext()
        var uris: [String: URL] = [:]
        try context.performAndWait {
            let departments = (0..<3).map { i in
                let department = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue("D\(i)", forKey: "name")
                return department
            }
            let employees = (0..<employeeCount).map { i in
                let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("E\(i)", forKey: "name")
                employee.setValue(Int64(i * 10), forKey: "salary")
                employee.setValue(notes(i), forKey: "notes")
                employee.setValue(departments[i % 3], forKey: "department")
                return employee
            }
            try context.save()
            for (i, employee) in employees.enumerated() { uris["E\(i)"] = employee.objectID.uriRepresentation() }
        }
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try context.performAndWait {
            let first = try context.existingObject(
                with: try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uris["E0"]!)))
            first.setValue(Int64(5), forKey: "salary")
            try context.save()
        }
        try container.close()
        return Filled(uris: uris, token: token, segments: try ShopModels.segmentFiles(url))
    }

    /// The first version with an optional `title` on employees and a fetch index on their name.
    static func version2() -> ManagedObjectModel {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        employee.properties.append(AttributeDescription(name: "title", type: .string))
        let name = employee.propertiesByName["name"]!
        employee.indexes.append(
            FetchIndexDescription(
                name: "byName", elements: [FetchIndexElementDescription(property: name, collationType: .binary)]))
        return model
    }

    /// Version 2 without `notes`, with a required `level` (default 3) and a `Project` entity.
    static func version3() -> ManagedObjectModel {
        let model = version2()
        let employee = model.entitiesByName["Employee"]!
        let level = AttributeDescription(name: "level", type: .integer16)
        level.isOptional = false
        level.defaultValue = Int16(3)
        employee.properties = employee.properties.filter { $0.name != "notes" } + [level]
        let lead = RelationshipDescription()
        lead.name = "lead"
        lead.maxCount = 1
        lead.destinationEntity = employee
        let project = EntityDescription(name: "Project")
        project.properties = [AttributeDescription(name: "code", type: .string), lead]
        model.entities.append(project)
        return model
    }

    /// Checks every employee, found by its URI from before the migrations.
    static func expectEmployees(
        in container: PersistentContainer, _ filled: Filled, hasNotes: Bool, level: Int16?
    ) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<employeeCount {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
                let employee = try context.existingObject(with: id)
                #expect(employee.value(forKey: "name") as? String == "E\(i)")
                #expect(employee.value(forKey: "salary") as? Int64 == (i == 0 ? 5 : Int64(i * 10)))
                #expect(
                    (employee.value(forKey: "department") as? ManagedObject)?.value(forKey: "name") as? String
                        == "D\(i % 3)")
                if hasNotes { #expect(employee.value(forKey: "notes") as? String == notes(i)) }
                if let level { #expect(employee.value(forKey: "level") as? Int16 == level) }
            }
        }
    }

    /// Whether every segment file of the first version is still there, unchanged (sealed ones
    /// keep their size; the active one may only grow).
    static func keepsSegments(_ url: URL, _ filled: Filled) throws -> Bool {
        let now = try ShopModels.segmentFiles(url)
        return filled.segments.allSatisfy { name, size in (now[name] ?? -1) >= size }
    }

    @Test func addingAnOptionalAttributeAndAnIndexKeepsIDsHistoryAndLog() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        let container = try PersistentHistoryTests.container(at: url, model: Self.version2())
        #expect(try Self.keepsSegments(url, filled))
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.inPlace.fileName).path))
        try Self.expectEmployees(in: container, filled, hasNotes: true, level: nil)
        let history = try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container)
        #expect(history.count == 1)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "E7")
            let found = try context.fetch(request)
            #expect(found.count == 1)
            #expect(found.first?.value(forKey: "title") == nil)
            found.first?.setValue("Engineer", forKey: "title")
            try context.save()
        }
        try container.close()

        let reopened = try PersistentHistoryTests.container(at: url, model: Self.version2())
        try Self.expectEmployees(in: reopened, filled, hasNotes: true, level: nil)
        let names = try reopened.viewContext.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: "title == %@", "Engineer")
            return try reopened.viewContext.fetch(request).map { $0.value(forKey: "name") as? String }
        }
        #expect(names == ["E7"])
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aSecondMigrationRemovesAnAttributeAndAddsARequiredOneAndAnEntity() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        try PersistentHistoryTests.container(at: url, model: Self.version2()).close()
        let container = try PersistentHistoryTests.container(at: url, model: Self.version3())
        #expect(try Self.keepsSegments(url, filled))
        try Self.expectEmployees(in: container, filled, hasNotes: false, level: 3)
        #expect(try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container).count == 1)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let lead = try context.existingObject(
                with: try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E4"]!)))
            let project = EntityDescription.insertNewObject(forEntityName: "Project", into: context)
            project.setValue("P1", forKey: "code")
            project.setValue(lead, forKey: "lead")
            lead.setValue(Int16(9), forKey: "level")
            try context.save()
        }
        try container.close()

        // Compaction rewrites the older rows in the newest layout; nothing changes for objects.
        let store = try Store.open(at: url, schema: try Store.storedSchema(at: url))
        try store.compact()
        try store.close()
        let reopened = try PersistentHistoryTests.container(at: url, model: Self.version3())
        try reopened.viewContext.performAndWait {
            let projects = try reopened.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Project"))
            #expect(projects.count == 1)
            let lead = projects.first?.value(forKey: "lead") as? ManagedObject
            #expect(lead?.value(forKey: "name") as? String == "E4")
            #expect(lead?.value(forKey: "level") as? Int16 == 9)
            #expect(lead?.objectID.uriRepresentation() == filled.uris["E4"])
        }
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aStepInterruptedBeforeTheManifestLeavesTheOldStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // The state a kill leaves after the pending metadata was written, before the manifest.
        let source = GraphModel.make()
        let destination = Self.version2()
        let plan = try #require(try InPlaceMigration.plan(at: url, from: source, to: destination))
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        try PendingMigrationMetadata.inPlace.writePending(destination: destination, metadata: metadata, at: url)
        #expect(plan.schema != (try Store.storedSchema(at: url)))

        let old = try PersistentHistoryTests.container(at: url)
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.inPlace.fileName).path))
        try Self.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
        let new = try PersistentHistoryTests.container(at: url, model: Self.version2())
        try Self.expectEmployees(in: new, filled, hasNotes: true, level: nil)
        try new.close()
    }

    @Test func aStepInterruptedAfterTheManifestLeavesTheNewStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // The state a kill leaves after the manifest was replaced, before the metadata's rename.
        let source = GraphModel.make()
        let destination = Self.version2()
        let plan = try #require(try InPlaceMigration.plan(at: url, from: source, to: destination))
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        try PendingMigrationMetadata.inPlace.writePending(destination: destination, metadata: metadata, at: url)
        try Store.evolveSchema(at: url, to: plan.schema, defaults: plan.defaults)
        // Until the store is next added, reading its metadata reads the committed step's.
        let read = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: read))

        let new = try PersistentHistoryTests.container(at: url, model: Self.version2())
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.inPlace.fileName).path))
        let stored = try #require(try StoreMetadataFile.read(at: url))
        #expect(destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
        try Self.expectEmployees(in: new, filled, hasNotes: true, level: nil)
        try new.close()
    }

    @Test func aTypeChangeIsStillMigratedByRewriting() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        _ = try Self.fill(url)
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        let source = GraphModel.make()
        let notes = AttributeDescription(name: "notes", type: .binaryData)
        employee.properties = employee.properties.filter { $0.name != "notes" } + [notes]
        #expect(try InPlaceMigration.plan(at: url, from: source, to: model) == nil)
    }
}
