import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata migrate` killed with SIGKILL at random points of a migration that rewrites the store:
/// the store is then the old one or the new one, whole, never a mix, and every object keeps its URI.
@Suite struct MigrationCrashTests {
    static let itemCount = 3000

    /// Version 1: items with a name, an `Integer 32` value and a note.
    static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
                <attribute name="note" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """
    /// Version 2: the value widened to `Integer 64`, an attribute added, the note removed.
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 64" defaultValueString="0"/>
                <attribute name="tag" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    @Test func killedMigrationLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uris) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<Self.itemCount).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                item.setValue("note \(i)", forKey: "note")
                return item
            }
        }

        let dryOutput = try MigrationKillHarness.dryRun(pristine, to: models[1], in: directory)
        #expect(dryOutput.contains("~ Item: changed"), "\(dryOutput)")
        #expect(dryOutput.contains("+ tag: new, default value"), "\(dryOutput)")
        #expect(dryOutput.contains("- note: removed"), "\(dryOutput)")
        #expect(!dryOutput.contains("Migrated"), "a dry run migrates nothing")
        #expect(dryOutput.contains("Method: rewrite in place"), "\(dryOutput)")
        let pristineMetadata = try PersistentStoreCoordinator.metadataForPersistentStore(
            ofType: SQLiteStoreType, at: pristine)
        #expect(
            try ManagedObjectModel(checkedContentsOf: models[0]).isConfiguration(
                withName: nil, compatibleWithStoreMetadata: pristineMetadata))

        let output = try MigrationKillHarness.migrateThenKillLeavingOldOrNew(pristine, to: models[1], in: directory) {
            url in
            try Self.check(url, models: models, uris: uris)
        }
        #expect(output.contains("value: type Integer 32 → Integer 64"), "\(output)")
    }

    /// Checks that the store at `url` is whole: the old store or the new one, every item intact
    /// when opened with its own model and migration off; then that it migrates to the new model.
    /// Every item keeps its URI from before (the rewrite keeps primary keys); `uris` are the items'
    /// URIs, item `i` named `item i`.
    /// Returns whether it was the new one.
    static func check(_ url: URL, models: [URL], uris: [URL]) throws -> Bool {
        let isNew = try MigrationKillHarness.holdsNewModel(url, models: models)
        try MigrationKillHarness.openBothWays(url, models: models, isNew: isNew) { context, coordinator, _ in
            for (i, uri) in uris.enumerated() {
                let item = try context.existingObject(
                    with: try #require(coordinator.managedObjectID(forURIRepresentation: uri)))
                #expect(item.value(forKey: "name") as? String == "item \(i)")
            }
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            #expect(items.count == uris.count)
            let values = Set(
                items.map { item -> Int64 in
                    let value =
                        (item.value(forKey: "value") as? Int64) ?? Int64(item.value(forKey: "value") as? Int32 ?? -1)
                    #expect(item.value(forKey: "name") as? String == "item \(value)")
                    return value
                })
            #expect(values == Set((0..<Int64(uris.count))))
        }
        return isNew
    }
}
