import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata migrate` killed with SIGKILL at random points of a rewrite in place that changes the
/// entity hierarchy (a new parent entity above `Item`, `name` moved up to it, the sub-entity
/// `Special` removed with its objects, the sub-entity `Extra` moved out to a root of its own):
/// the store is then the old one or the new one, whole, and every item kept keeps its URI.
@Suite struct MigrationHierarchyCrashTests {
    static let itemCount = 2000

    /// Version 1: items, every tenth a `Special` item, every seventh other one an `Extra` item.
    static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
            <entity name="Item" representedClassName="Item">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
            </entity>
            <entity name="Special" representedClassName="Special" parentEntity="Item">
                <attribute name="grade" optional="YES" attributeType="Integer 16"/>
            </entity>
            <entity name="Extra" representedClassName="Extra" parentEntity="Item">
                <attribute name="size" optional="YES" attributeType="Integer 16"/>
            </entity>
        </model>
        """
    /// Version 2: `Thing` above `Item`, holding `name`; `Special` removed; `Extra` a root entity.
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2">
            <entity name="Thing" representedClassName="Thing" isAbstract="YES">
                <attribute name="name" attributeType="String"/>
            </entity>
            <entity name="Item" representedClassName="Item" parentEntity="Thing">
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
            </entity>
            <entity name="Extra" representedClassName="Extra">
                <attribute name="name" attributeType="String"/>
                <attribute name="value" attributeType="Integer 32" defaultValueString="0"/>
                <attribute name="size" optional="YES" attributeType="Integer 16"/>
            </entity>
        </model>
        """

    /// Whether item `i` is a `Special` one.
    static func isSpecial(_ i: Int) -> Bool { i.isMultiple(of: 10) }

    /// Whether item `i` is an `Extra` one.
    static func isExtra(_ i: Int) -> Bool { !isSpecial(i) && i.isMultiple(of: 7) }

    /// Item `i`'s entity in version 1.
    static func entity(_ i: Int) -> String { isSpecial(i) ? "Special" : isExtra(i) ? "Extra" : "Item" }

    @Test func killedHierarchyRewriteLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels([Self.version1, Self.version2], in: directory)
        let (pristine, uris) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<Self.itemCount).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: Self.entity(i), into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                return item
            }
        }
        let dryOutput = try MigrationKillHarness.dryRun(pristine, to: models[1], in: directory)
        #expect(dryOutput.contains("Method: rewrite in place"), "\(dryOutput)")

        try MigrationKillHarness.migrateThenKillLeavingOldOrNew(pristine, to: models[1], in: directory) { url in
            try Self.check(url, models: models, uris: uris)
        }
    }

    /// Checks that the store at `url` is the old store or the new one, whole: every item found by
    /// its URI, the special ones only in the old store. Returns whether it was the new one.
    static func check(_ url: URL, models: [URL], uris: [URL]) throws -> Bool {
        let isNew = try MigrationKillHarness.holdsNewModel(url, models: models)
        try MigrationKillHarness.openBothWays(url, models: models, isNew: isNew) { context, coordinator, migrating in
            let converted = isNew || migrating
            for (i, uri) in uris.enumerated() where !(converted && Self.isSpecial(i)) {
                let item = try context.existingObject(
                    with: try #require(coordinator.managedObjectID(forURIRepresentation: uri)))
                #expect(item.value(forKey: "name") as? String == "item \(i)")
                #expect(item.entity.name == Self.entity(i))
                #expect(item.value(forKey: "value") as? Int32 == Int32(i))
            }
            let count = try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
            let extras = (0..<itemCount).filter(Self.isExtra).count
            #expect(count == (converted ? itemCount - itemCount / 10 - extras : itemCount))
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Extra")) == extras)
        }
        return isNew
    }
}
