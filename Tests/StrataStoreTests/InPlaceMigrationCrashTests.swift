import Foundation
import Strata
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
        let models = try [Self.version1, Self.version2].enumerated().map { index, text in
            let url = URL(fileURLWithPath: directory.path + "/Items\(index + 1).xcdatamodel")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url.appendingPathComponent("contents"))
            return url
        }
        let pristine = directory.store("Pristine")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: models[0]))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: pristine)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let uris = try context.performAndWait {
            let items = (0..<Self.itemCount).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                return item
            }
            try context.save()
            return items.map { $0.objectID.uriRepresentation() }
        }
        try coordinator.remove(store)

        let strata = try CLITests.executable().path
        let (dryEnd, dryOutput) = try ChildProcess.run(
            strata, ["migrate", pristine.path, "--model", models[1].path, "--dry-run"], stderrPath: directory.path + "/dry.err")
        #expect(dryEnd == .exited(0))
        #expect(dryOutput.contains("Method: in place"), "\(dryOutput)")
        let complete = directory.store("Complete")
        try FileManager.default.copyItem(at: pristine, to: complete)
        let started = ContinuousClock.now
        let (end, output) = try ChildProcess.run(strata, ["migrate", complete.path, "--model", models[1].path], stderrPath: directory.path + "/complete.err")
        let duration = ContinuousClock.now - started
        #expect(end == .exited(0), "\(output)")
        #expect(try Self.check(complete, models: models, uris: uris, expectNew: true))

        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<10 {
            let url = directory.store("Killed\(iteration)")
            try FileManager.default.copyItem(at: pristine, to: url)
            let child = try ChildProcess(strata, ["migrate", url.path, "--model", models[1].path], stderrPath: directory.path + "/killed\(iteration).err")
            let fraction = Double.random(in: 0...1.1, using: &generator)
            Thread.sleep(forTimeInterval: Double(duration.components.seconds) * fraction + Double(duration.components.attoseconds) / 1e18 * fraction)
            child.sigkill()
            _ = child.wait()
            try Self.check(url, models: models, uris: uris, expectNew: nil)
        }
    }

    /// Checks that the store at `url` is whole: opened with the model its metadata names and
    /// migration off, then with the new model migrating, every item is there under its URI from
    /// before. Returns whether it was the new one.
    @discardableResult
    static func check(_ url: URL, models: [URL], uris: [URL], expectNew: Bool?) throws -> Bool {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        let old = try ManagedObjectModel(contentsOf: models[0]), new = try ManagedObjectModel(contentsOf: models[1])
        let isNew = new.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        #expect(isNew != old.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "the metadata names one model")
        if let expectNew { #expect(isNew == expectNew) }
        for (model, migrating) in [(isNew ? new : old, false), (try ManagedObjectModel(contentsOf: models[1]), true)] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url,
                options: [MigratePersistentStoresAutomaticallyOption: migrating, InferMappingModelAutomaticallyOption: migrating])
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for (i, uri) in uris.enumerated() {
                    let id = try #require(coordinator.managedObjectID(forURIRepresentation: uri))
                    let item = try context.existingObject(with: id)
                    #expect(item.value(forKey: "name") as? String == "item \(i)")
                    #expect(item.value(forKey: "value") as? Int32 == Int32(i))
                    if migrating { #expect(item.value(forKey: "tag") == nil) }
                }
            }
            try coordinator.remove(store)
        }
        return isNew
    }
}
