import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// Lightweight migrations that must convert rows (a type change, a rename, a property made
/// required) made by rewriting the store's log in place: every object keeps its ID and URI,
/// the history stays readable with the same tokens, and the store reopens.
@Suite struct InPlaceRewriteMigrationTests {
    typealias Filled = InPlaceMigrationTests.Filled

    /// The first version with `salary` as `Double`, `notes` renamed `remarks` and `active` made
    /// required (its default is `true`).
    static func retyped(from base: ManagedObjectModel = GraphModel.make()) -> ManagedObjectModel {
        let employee = base.entitiesByName["Employee"]!
        // Objects of the generic class: `Employee`'s typed properties have the old types.
        employee.managedObjectClassName = "ManagedObject"
        // Retyped where it stands: the `bySalary` fetch index names it.
        let salary = employee.propertiesByName["salary"] as! AttributeDescription
        salary.attributeType = .doubleAttributeType
        salary.defaultValue = 0.0
        salary.minValue = 0.0
        let remarks = AttributeDescription(name: "remarks", type: .string)
        remarks.renamingIdentifier = "notes"
        employee.properties = employee.properties.map { property in
            switch property.name {
            case "notes": return remarks
            case "active":
                property.isOptional = false
                return property
            default: return property
            }
        }
        return base
    }

    /// Checks every employee, found by its URI from before the migration, after the retyping.
    static func expectRetyped(in container: PersistentContainer, _ filled: Filled) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<InPlaceMigrationTests.employeeCount {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
                #expect(id.uriRepresentation() == filled.uris["E\(i)"])
                let employee = try context.existingObject(with: id)
                #expect(employee.value(forKey: "name") as? String == "E\(i)")
                #expect(employee.value(forKey: "salary") as? Double == (i == 0 ? 5 : Double(i * 10)))
                #expect(employee.value(forKey: "remarks") as? String == InPlaceMigrationTests.notes(i))
                #expect(employee.value(forKey: "active") as? Bool == true)
                #expect(
                    (employee.value(forKey: "department") as? ManagedObject)?.value(forKey: "name") as? String
                        == "D\(i % 3)")
            }
        }
    }

    @Test func aTypeChangeAndARenameKeepIDsHistoryAndReopen() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        let destination = Self.retyped()
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: destination) == .inPlaceRewrite)

        let container = try PersistentHistoryTests.container(at: url, model: Self.retyped())
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        #expect(
            Set(try ShopModels.segmentFiles(url).keys).isDisjoint(with: filled.segments.keys),
            "the log was rewritten into new segments")
        try Self.expectRetyped(in: container, filled)
        // The history after the token: the one update, of E0's salary, read under the new model.
        let later = try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container)
        #expect(later.count == 1)
        let change = try #require(later.first?.changes?.first)
        #expect(change.changedObjectID.uriRepresentation() == filled.uris["E0"])
        #expect(change.changeType == .update)
        #expect(change.updatedProperties?.map(\.name) == ["salary"])
        // The whole history: the first save inserted every object, under its URI of today.
        let all = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(all.count == 2)
        let inserted = Set(
            (all.first?.changes ?? []).filter { $0.changeType == .insert }.map {
                $0.changedObjectID.uriRepresentation()
            })
        #expect(Set(filled.uris.values).isSubset(of: inserted))
        // New objects get keys after the old ones; a fetch on a converted attribute works.
        let context = container.newBackgroundContext()
        let newURI = try context.performAndWait {
            let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("New", forKey: "name")
            employee.setValue(1.5, forKey: "salary")
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: "salary > 585.0")
            #expect(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }.sorted() == ["E59"])
            return employee.objectID.uriRepresentation()
        }
        #expect(!filled.uris.values.contains(newURI))
        try container.close()

        let reopened = try PersistentHistoryTests.container(at: url, model: Self.retyped())
        try Self.expectRetyped(in: reopened, filled)
        #expect(
            try reopened.viewContext.performAndWait {
                try reopened.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Employee"))
            }
                == InPlaceMigrationTests.employeeCount + 1)
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func rowsOfAnEarlierInPlaceStepAreConverted() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // Version 2 is made in place: older rows lack `title`, newer ones have it.
        let second = try PersistentHistoryTests.container(at: url, model: InPlaceMigrationTests.version2())
        try second.viewContext.performAndWait {
            let e3 = try second.viewContext.existingObject(
                with: try #require(
                    second.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E3"]!)))
            e3.setValue("Lead", forKey: "title")
            try second.viewContext.save()
        }
        try second.close()
        let container = try PersistentHistoryTests.container(
            at: url, model: Self.retyped(from: InPlaceMigrationTests.version2()))
        try Self.expectRetyped(in: container, filled)
        try container.viewContext.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: "title != nil")
            #expect(
                try container.viewContext.fetch(request).map { $0.objectID.uriRepresentation() } == [filled.uris["E3"]!]
            )
        }
        #expect(try PersistentHistoryTests.transactions(.fetchHistory(after: filled.token), in: container).count == 2)
        try container.close()
    }

    @Test func aRenamedEntityInAHierarchyKeepsItsKeys() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // Employee becomes Staff (renamed) with a new sub-entity Manager.
        let model = GraphModel.make()
        let staff = model.entitiesByName["Employee"]!
        staff.name = "Staff"
        staff.renamingIdentifier = "Employee"
        staff.managedObjectClassName = "ManagedObject"
        let manager = EntityDescription(name: "Manager")
        manager.properties = [AttributeDescription(name: "reports", type: .integer16)]
        staff.subentities = [manager]
        model.entities.append(manager)
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .inPlaceRewrite)

        let container = try PersistentHistoryTests.container(at: url, model: model)
        try container.viewContext.performAndWait {
            let all = try container.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Staff"))
            #expect(all.count == InPlaceMigrationTests.employeeCount)
            for object in all {
                let name = try #require(object.value(forKey: "name") as? String)
                let old = try #require(filled.uris[name])
                // The entity's name in the URI changed with the entity; the key did not.
                #expect(object.objectID.uriRepresentation().lastPathComponent == old.lastPathComponent)
                #expect(object.entity.name == "Staff")
            }
            let boss = EntityDescription.insertNewObject(forEntityName: "Manager", into: container.viewContext)
            boss.setValue("Boss", forKey: "name")
            try container.viewContext.save()
            #expect(
                try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Staff"))
                    == InPlaceMigrationTests.employeeCount + 1)
        }
        try container.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aRequiredAttributeWithoutValueOrDefaultFailsAndKeepsTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        let model = Self.retyped()
        model.entitiesByName["Employee"]!.propertiesByName["remarks"]!.isOptional = false
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .inPlaceRewrite)
        #expect(throws: CoreDataError.self) { try PersistentHistoryTests.container(at: url, model: model) }
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        #expect(
            try ShopModels.segmentFiles(url).keys.sorted() == filled.segments.keys.sorted(),
            "the rewrite's segments were removed")
        let old = try PersistentHistoryTests.container(at: url)
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
    }

    @Test func aRewriteInterruptedBeforeItsManifestLeavesTheOldStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // A kill after the pending metadata and a new segment were written, before the manifest.
        let destination = Self.retyped()
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        try PendingMigrationMetadata.rewrite.writePending(destination: destination, metadata: metadata, at: url)
        let stray = url.appendingPathComponent("segments/\(String(format: "%08u.log", 9_999))")
        try Data(repeating: 7, count: 4096).write(to: stray)

        let old = try PersistentHistoryTests.container(at: url)
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        try InPlaceMigrationTests.expectEmployees(in: old, filled, hasNotes: true, level: nil)
        try old.close()
        let new = try PersistentHistoryTests.container(at: url, model: Self.retyped())
        try Self.expectRetyped(in: new, filled)
        try new.close()
    }

    @Test func aRewriteInterruptedAfterItsManifestLeavesTheNewStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try Self.fill(url)
        // A kill after the manifest was replaced, before the metadata's rename.
        let source = GraphModel.make()
        let destination = Self.retyped()
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        let plan = try #require(try InPlaceRewrite.plan(at: url, from: source, to: destination, mapping: mapping))
        let metadata = try #require(try StoreMetadataFile.read(at: url))
        try PendingMigrationMetadata.rewrite.writePending(destination: destination, metadata: metadata, at: url)
        let report = try Store.rewriteLog(at: url, plan.rewrite)
        #expect(report.rows >= InPlaceMigrationTests.employeeCount + 3)
        let read = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: read))

        let new = try PersistentHistoryTests.container(at: url, model: Self.retyped())
        #expect(
            !FileManager.default.fileExists(
                atPath: url.appendingPathComponent(PendingMigrationMetadata.rewrite.fileName).path))
        try Self.expectRetyped(in: new, filled)
        try new.close()
    }

    @Test func entitiesMergedIntoOneHierarchyTakeTheOtherPath() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        _ = try Self.fill(url)
        // Department becomes a sub-entity of a new root that Employee also joins: keys would collide.
        let model = GraphModel.make()
        let party = EntityDescription(name: "Party")
        party.properties = [AttributeDescription(name: "since", type: .date)]
        party.subentities = [model.entitiesByName["Department"]!, model.entitiesByName["Employee"]!]
        model.entities.append(party)
        #expect(try MigrationMethod.forStore(at: url, from: GraphModel.make(), to: model) == .rewrite)
    }

    /// The first version's store of ``InPlaceMigrationTests/fill(_:)``.
    static func fill(_ url: URL) throws -> Filled { try InPlaceMigrationTests.fill(url) }
}
