import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata migrate` adding a uniqueness constraint, made in place after the stored objects are
/// checked for duplicates: killed with SIGKILL at random points it leaves the old store or the
/// new one, whole, every object at its URI; in the new one a duplicate save conflicts. A store
/// whose objects violate the constraint makes `strata migrate` fail, its dry run first, and stays
/// as it was.
@Suite struct MigrationUniquenessCrashTests {
    static let itemCount = 3000

    /// Version 1: items with a name.
    static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
            </entity>
        </model>
        """
    /// Version 2: the name unique.
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """

    /// A store of version 1 with ``itemCount`` items named `item i` (and one more named `item 0`
    /// when `duplicate`).
    static func pristine(
        _ models: [URL], in directory: TemporaryDirectory, duplicate: Bool = false
    ) throws -> (url: URL, uris: [URL]) {
        try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<(Self.itemCount + (duplicate ? 1 : 0))).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i % Self.itemCount)", forKey: "name")
                return item
            }
        }
    }

    @Test func killedConstraintMigrationLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uris) = try Self.pristine(models, in: directory)
        let dryOutput = try MigrationKillHarness.dryRun(pristine, to: models[1], in: directory)
        #expect(
            dryOutput.contains("~ Item: changed\n    + unique (name): uniqueness constraint added\nMethod: in place"),
            "\(dryOutput)")
        #expect(
            dryOutput.contains(
                "\nStored objects: no two share the values of an added uniqueness constraint (1 checked).\n"),
            "\(dryOutput)")

        try MigrationKillHarness.migrateThenKillLeavingOldOrNew(pristine, to: models[1], in: directory) { url in
            try Self.check(url, models: models, uris: uris)
        }
    }

    @Test func storedDuplicatesFailTheCommandAndLeaveTheStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uris) = try Self.pristine(models, in: directory, duplicate: true)
        let (dryEnd, dryOutput) = try ChildProcess.run(
            try BuiltExecutable.url(named: "strata").path,
            ["migrate", pristine.path, "--model", models[1].path, "--dry-run"],
            stderrPath: directory.path + "/dry.err")
        let dryErrors = try String(contentsOfFile: directory.path + "/dry.err", encoding: .utf8)
        #expect(dryEnd != .exited(0), "a dry run finds the duplicates the migration would fail on: \(dryOutput)")
        #expect(dryOutput.contains("Method: in place") && !dryOutput.contains("Stored objects:"), "\(dryOutput)")
        #expect(dryErrors.contains("134111") && dryErrors.contains("name = \"item 0\""), "\(dryErrors)")
        let (end, output) = try ChildProcess.run(
            try BuiltExecutable.url(named: "strata").path, ["migrate", pristine.path, "--model", models[1].path],
            stderrPath: directory.path + "/failed.err")
        let errors = try String(contentsOfFile: directory.path + "/failed.err", encoding: .utf8)
        #expect(end != .exited(0), "\(output)")
        #expect(errors.contains("134111") && errors.contains("name = \"item 0\""), "\(errors)")
        #expect(try !MigrationKillHarness.holdsNewModel(pristine, models: models))
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try ManagedObjectModel(checkedContentsOf: models[0]))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: pristine)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for (i, uri) in uris.enumerated() {
                let item = try context.existingObject(
                    with: try #require(coordinator.managedObjectID(forURIRepresentation: uri)))
                #expect(item.value(forKey: "name") as? String == "item \(i % Self.itemCount)")
            }
        }
        try coordinator.remove(store)
    }

    /// Checks that the store at `url` is the old store or the new one, whole: every item found by
    /// its URI (opened with its own model, then migrated), and with the new model a second item
    /// named `item 0` conflicting. Returns whether it was the new one.
    static func check(_ url: URL, models: [URL], uris: [URL]) throws -> Bool {
        let isNew = try MigrationKillHarness.holdsNewModel(url, models: models)
        try MigrationKillHarness.openBothWays(url, models: models, isNew: isNew) { context, coordinator, migrating in
            for (i, uri) in uris.enumerated() {
                let item = try context.existingObject(
                    with: try #require(coordinator.managedObjectID(forURIRepresentation: uri)))
                #expect(item.value(forKey: "name") as? String == "item \(i)")
            }
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == itemCount)
            guard isNew || migrating else { return }
            let twin = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            twin.setValue("item 0", forKey: "name")
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .managedObjectConstraintMerge)
            context.rollback()
        }
        return isNew
    }
}
