import Foundation
import Strata
import Testing

/// `strata migrate` killed with SIGKILL at random points of a migration that rewrites the store:
/// the store is then the old one or the new one, whole, never a mix.
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
        try context.performAndWait {
            for i in 0..<Self.itemCount {
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                item.setValue("note \(i)", forKey: "note")
            }
            try context.save()
        }
        try coordinator.remove(store)

        let strata = try CLITests.executable().path
        let (dryEnd, dryOutput) = try ChildProcess.run(
            strata, ["migrate", pristine.path, "--model", models[1].path, "--dry-run"], stderrPath: directory.path + "/dry.err")
        #expect(dryEnd == .exited(0))
        #expect(dryOutput.contains("~ Item: changed"), "\(dryOutput)")
        #expect(dryOutput.contains("+ tag: new, default value"), "\(dryOutput)")
        #expect(dryOutput.contains("- note: removed"), "\(dryOutput)")
        #expect(!dryOutput.contains("Migrated"), "a dry run migrates nothing")
        let pristineMetadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: pristine)
        #expect(try ManagedObjectModel(contentsOf: models[0]).isConfiguration(withName: nil, compatibleWithStoreMetadata: pristineMetadata))
        let complete = directory.store("Complete")
        try FileManager.default.copyItem(at: pristine, to: complete)
        let started = ContinuousClock.now
        let (end, output) = try ChildProcess.run(strata, ["migrate", complete.path, "--model", models[1].path], stderrPath: directory.path + "/complete.err")
        let duration = ContinuousClock.now - started
        #expect(end == .exited(0), "\(output)")
        #expect(output.contains("value: type Integer 32 → Integer 64"), "\(output)")
        try Self.check(complete, models: models, expectNew: true)

        var outcomes = (old: 0, new: 0)
        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<10 {
            let url = directory.store("Killed\(iteration)")
            try FileManager.default.copyItem(at: pristine, to: url)
            let child = try ChildProcess(strata, ["migrate", url.path, "--model", models[1].path], stderrPath: directory.path + "/killed\(iteration).err")
            let fraction = Double.random(in: 0...1.1, using: &generator)
            Thread.sleep(forTimeInterval: Double(duration.components.seconds) * fraction + Double(duration.components.attoseconds) / 1e18 * fraction)
            child.sigkill()
            _ = child.wait()
            if try Self.check(url, models: models, expectNew: nil) { outcomes.new += 1 } else { outcomes.old += 1 }
        }
        #expect(outcomes.old + outcomes.new == 10)
    }

    /// Checks that the store at `url` is whole: the old store or the new one, every item intact
    /// when opened with its own model and migration off; then that it migrates to the new model.
    /// Returns whether it was the new one.
    @discardableResult
    static func check(_ url: URL, models: [URL], expectNew: Bool?) throws -> Bool {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        let old = try ManagedObjectModel(contentsOf: models[0]), new = try ManagedObjectModel(contentsOf: models[1])
        let isNew = new.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        #expect(isNew != old.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "the metadata names one model")
        if let expectNew { #expect(isNew == expectNew) }
        for (model, migrating) in [(isNew ? new : old, false), (try ManagedObjectModel(contentsOf: models[1]), true)] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url, options: [MigratePersistentStoresAutomaticallyOption: migrating, InferMappingModelAutomaticallyOption: migrating])
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                #expect(items.count == itemCount)
                let values = Set(items.map { item -> Int64 in
                    let value = (item.value(forKey: "value") as? Int64) ?? Int64(item.value(forKey: "value") as? Int32 ?? -1)
                    #expect(item.value(forKey: "name") as? String == "item \(value)")
                    return value
                })
                #expect(values == Set((0..<Int64(itemCount))))
            }
            try coordinator.remove(store)
        }
        return isNew
    }
}
