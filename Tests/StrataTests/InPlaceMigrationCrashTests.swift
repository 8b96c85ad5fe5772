import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata migrate` killed with SIGKILL at random points of a migration made in place: the store
/// is then the old one or the new one, whole, and object IDs saved before resolve in either.
@Suite struct InPlaceMigrationCrashTests {
    static let itemCount = 2000

    /// Version 1: items with a name and an `Integer 32` value.
    static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
            </entity>
        </model>
        """
    /// Version 2: an optional attribute and an entity added (both in place).
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
                <attribute name="tag" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Label" representedClassName="Label">
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    @Test func killedInPlaceMigrationLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uriList) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<Self.itemCount).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                return item
            }
        }

        let dryOutput = try MigrationKillHarness.dryRun(pristine, to: models[1], in: directory)
        #expect(dryOutput.contains("Method: in place"), "\(dryOutput)")
        try MigrationKillHarness.migrateThenKillLeavingOldOrNew(pristine, to: models[1], in: directory) { url in
            try Self.check(url, models: models, uris: uriList)
        }
    }

    /// Checks that the store at `url` is whole: opened with the model its metadata names and
    /// migration off, then with the new model migrating, every item is there under its URI from
    /// before. Returns whether it was the new one.
    static func check(_ url: URL, models: [URL], uris: [URL]) throws -> Bool {
        let isNew = try MigrationKillHarness.holdsNewModel(url, models: models)
        try MigrationKillHarness.openBothWays(url, models: models, isNew: isNew) { context, coordinator, migrating in
            for (i, uri) in uris.enumerated() {
                let id = try #require(coordinator.managedObjectID(forURIRepresentation: uri))
                let item = try context.existingObject(with: id)
                #expect(item.value(forKey: "name") as? String == "item \(i)")
                #expect(item.value(forKey: "value") as? Int32 == Int32(i))
                if migrating { #expect(item.value(forKey: "tag") == nil) }
            }
        }
        return isNew
    }
}
