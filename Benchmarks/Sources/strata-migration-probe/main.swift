// strata-migration-probe: measures lightweight migration on a store of N objects.
//
//     strata-migration-probe <count> <directory>
//
// Writes a store of <count> items (name, Integer 32 value, date; every 100th item related to a
// group) in <directory>, then migrates one copy to a model that only adds an optional
// attribute (made in place: only the manifest and metadata are written), another to one that
// widens the value to Integer 64 (the log rewritten in place, keys kept), others to one that
// makes `name` required (values only: the engine layout stays) and one that puts a new abstract
// parent entity above `Item` (both rewritten in place), and one more to the widened
// model through a MigrationManager into a new store (how a rewrite was made before, objects
// getting new IDs), and prints, for each, the method, the seconds taken (open with migration,
// then close; for the manager, its migrateStore) and the bytes the process wrote meanwhile
// (`wchar` of /proc/self/io: every write and pwrite, whether or not it reached the disk yet).
// Exit status 0 on success, 1 with a message on standard error otherwise.

import Foundation
import Strata

/// The probe's model: `Item` and `Group`, with the changes of a migration applied.
func makeModel(
    addsAttribute: Bool = false, widensValue: Bool = false, requiresName: Bool = false, addsParent: Bool = false
) -> ManagedObjectModel {
    let item = EntityDescription(name: "Item")
    let group = EntityDescription(name: "Group")
    let name = AttributeDescription(name: "name", type: .string)
    if requiresName {
        name.isOptional = false
        name.defaultValue = ""
    }
    let value = AttributeDescription(name: "value", type: widensValue ? .integer64 : .integer32)
    value.isOptional = false
    value.defaultValue = 0
    let created = AttributeDescription(name: "created", type: .date)
    let title = AttributeDescription(name: "title", type: .string)
    let members = RelationshipDescription()
    members.name = "members"
    members.maxCount = 0
    let owner = RelationshipDescription()
    owner.name = "group"
    members.destinationEntity = item
    owner.destinationEntity = group
    members.inverseRelationship = owner
    owner.inverseRelationship = members
    item.properties =
        [name, value, created, owner] + (addsAttribute ? [AttributeDescription(name: "tag", type: .string)] : [])
    group.properties = [title, members]
    let model = ManagedObjectModel()
    model.entities = [group, item]
    if addsParent {
        let thing = EntityDescription(name: "Thing")
        thing.isAbstract = true
        thing.properties = [AttributeDescription(name: "note", type: .string)]
        thing.subentities = [item]
        model.entities.append(thing)
    }
    return model
}

/// The bytes this process has written so far (`wchar` of /proc/self/io), or 0 where there is none.
func bytesWrittenByProcess() -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
        return Int64(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
}

/// Seconds in a duration.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Runs `body` and prints how long it took and what the process wrote meanwhile.
func measure(_ label: String, _ body: () throws -> Void) throws {
    let written = bytesWrittenByProcess()
    let clock = ContinuousClock.now
    try body()
    print(
        "\(label): \(String(format: "%.3f", seconds(ContinuousClock.now - clock))) s, \(bytesWrittenByProcess() - written) bytes written"
    )
}

/// Opens `url` with `model` (migrating it) and prints the method, how long it took and what it wrote.
func migrate(_ url: URL, to model: ManagedObjectModel, label: String) throws {
    print("\(label): method \(try MigrationMethod.forStore(at: url, from: makeModel(), to: model).rawValue)")
    try measure(label) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            type: .sqlite, at: url,
            options: [
                PersistentStoreOptionKey.durability: "relaxed", MigratePersistentStoresAutomaticallyOption: true,
                InferMappingModelAutomaticallyOption: true,
            ])
        try coordinator.remove(store)
    }
}

/// Migrates `url` to `model` through a ``MigrationManager`` into a new store at `destination`.
func migrateThroughManager(_ url: URL, to model: ManagedObjectModel, destination: URL, label: String) throws {
    try? FileManager.default.removeItem(at: destination)
    try measure(label) {
        let source = makeModel()
        let manager = MigrationManager(sourceModel: source, destinationModel: model)
        try manager.migrateStore(
            from: url, sourceType: SQLiteStoreType, options: [ReadOnlyPersistentStoreOption: true],
            with: try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: model),
            toDestinationURL: destination, destinationType: SQLiteStoreType,
            destinationOptions: [PersistentStoreOptionKey.durability: "relaxed"])
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[1]), count > 0 else {
    FileHandle.standardError.write(Data("usage: strata-migration-probe <count> <directory>\n".utf8))
    exit(1)
}
do {
    let directory = URL(fileURLWithPath: arguments[2])
    let source = directory.appendingPathComponent("Probe.strata")
    try? FileManager.default.removeItem(at: source)
    let coordinator = PersistentStoreCoordinator(managedObjectModel: makeModel())
    let store = try coordinator.addPersistentStore(
        type: .sqlite, at: source, options: [PersistentStoreOptionKey.durability: "relaxed"])
    let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    let clock = ContinuousClock.now
    try context.performAndWait {
        var group: ManagedObject?
        for index in 0..<count {
            if index.isMultiple(of: 100) {
                group = EntityDescription.insertNewObject(forEntityName: "Group", into: context)
                group?.setValue("group \(index / 100)", forKey: "title")
            }
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("item \(index)", forKey: "name")
            item.setValue(Int32(truncatingIfNeeded: index), forKey: "value")
            item.setValue(Date(timeIntervalSinceReferenceDate: Double(index)), forKey: "created")
            item.setValue(group, forKey: "group")
            if index % 10_000 == 9_999 {
                try context.save()
                context.reset()
            }
        }
        try context.save()
    }
    try coordinator.remove(store)
    print("wrote \(count) items in \(String(format: "%.3f", seconds(ContinuousClock.now - clock))) s")
    for (label, model) in [
        ("add optional attribute (in place)", makeModel(addsAttribute: true)),
        ("widen Integer 32 to Integer 64 (rewrite in place)", makeModel(widensValue: true)),
        ("name made required, same layout (rewrite in place)", makeModel(requiresName: true)),
        ("new parent entity above Item (rewrite in place)", makeModel(addsParent: true)),
    ] {
        let copy = directory.appendingPathComponent("Probe-\(label.split(separator: " ")[0]).strata")
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: source, to: copy)
        try migrate(copy, to: model, label: label)
    }
    try migrateThroughManager(
        source, to: makeModel(widensValue: true), destination: directory.appendingPathComponent("Probe-manager.strata"),
        label: "widen Integer 32 to Integer 64 (MigrationManager into a new store)")
} catch {
    FileHandle.standardError.write(Data("strata-migration-probe: \(error)\n".utf8))
    exit(1)
}
