import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata migrate` killed with SIGKILL at random points of a rewrite in place that converts
/// values but leaves the engine layout as it was (a note made required, with a default that
/// fills the notes objects lack): the store is then the old one or the new one, whole, and every
/// object keeps its URI. The stored schema cannot tell the two apart; the rewrite's segments do.
@Suite struct MigrationValueOnlyCrashTests {
    static let itemCount = 3000

    /// Version 1: items with a name and an optional note (every other item has one).
    static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="note" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """
    /// Version 2: the note required, with the default value `none`.
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="note" attributeType="String" defaultValueString="none"/>
            </entity>
        </model>
        """

    /// Item `i`'s note in version 1.
    static func note(_ i: Int) -> String? { i.isMultiple(of: 2) ? "note \(i)" : nil }

    @Test func killedValueOnlyRewriteLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uris) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<Self.itemCount).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Self.note(i), forKey: "note")
                return item
            }
        }
        let dryOutput = try MigrationKillHarness.dryRun(pristine, to: models[1], in: directory)
        #expect(dryOutput.contains("Method: rewrite in place"), "\(dryOutput)")

        try MigrationKillHarness.migrateThenKillLeavingOldOrNew(pristine, to: models[1], in: directory) { url in
            try Self.check(url, models: models, uris: uris)
        }
    }

    /// Checks that the store at `url` is the old store or the new one, whole: every item found
    /// by its URI with the note of its version (opened with its own model, then migrated).
    /// Returns whether it was the new one.
    static func check(_ url: URL, models: [URL], uris: [URL]) throws -> Bool {
        let isNew = try MigrationKillHarness.holdsNewModel(url, models: models)
        try MigrationKillHarness.openBothWays(url, models: models, isNew: isNew) { context, coordinator, migrating in
            let converted = isNew || migrating
            for (i, uri) in uris.enumerated() {
                let item = try context.existingObject(
                    with: try #require(coordinator.managedObjectID(forURIRepresentation: uri)))
                #expect(item.value(forKey: "name") as? String == "item \(i)")
                #expect(item.value(forKey: "note") as? String == (converted ? Self.note(i) ?? "none" : Self.note(i)))
            }
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == itemCount)
        }
        return isNew
    }
}
