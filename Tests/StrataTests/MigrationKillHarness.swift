import Foundation
import Strata
import StrataTestSupport
import Testing

/// What the migration kill tests share: model versions written as `.xcdatamodel` files, a store
/// of the first version, and `strata migrate` run to the end once and then killed with SIGKILL at
/// random points of that duration.
enum MigrationKillHarness {
    /// Writes each model text as `Items<n>.xcdatamodel` in `directory`; returns their URLs.
    static func writeModels(_ texts: [String], in directory: TemporaryDirectory) throws -> [URL] {
        try texts.enumerated().map { index, text in
            let url = URL(fileURLWithPath: directory.path + "/Items\(index + 1).xcdatamodel")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url.appendingPathComponent("contents"))
            return url
        }
    }

    /// Creates the store `Pristine` of the model at `model` and fills it in one save with the
    /// objects `fill` inserts; returns its URL and those objects' URIs after the save.
    static func pristineStore(
        of model: URL, in directory: TemporaryDirectory, fill: (ManagedObjectContext) throws -> [ManagedObject]
    ) throws -> (url: URL, uris: [URL]) {
        let url = directory.store("Pristine")
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try ManagedObjectModel(checkedContentsOf: model))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let uris = try context.performAndWait {
            let objects = try fill(context)
            try context.save()
            return objects.map { $0.objectID.uriRepresentation() }
        }
        try coordinator.remove(store)
        return (url, uris)
    }

    /// Migrates a copy of `pristine` to `model` with `strata migrate` and checks it with `check`;
    /// then, `iterations` times, kills `strata migrate` on a fresh copy at a random point of that
    /// run's duration (or just after it) and checks what is left with `check`.
    ///
    /// - Returns: the output of the complete run.
    @discardableResult
    static func migrateThenKill(
        _ pristine: URL, to model: URL, in directory: TemporaryDirectory, iterations: Int = 10,
        check: (URL) throws -> Void
    ) throws -> String {
        let strata = try BuiltExecutable.url(named: "strata").path
        let complete = directory.store("Complete")
        try FileManager.default.copyItem(at: pristine, to: complete)
        let started = ContinuousClock.now
        let (end, output) = try ChildProcess.run(
            strata, ["migrate", complete.path, "--model", model.path], stderrPath: directory.path + "/complete.err")
        let duration = ContinuousClock.now - started
        #expect(end == .exited(0), "\(output)")
        try check(complete)

        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<iterations {
            let url = directory.store("Killed\(iteration)")
            let child = try startMigration(pristine, copiedTo: url, model: model, in: directory)
            let delay = duration * Double.random(in: 0...1.1, using: &generator)
            Thread.sleep(
                forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            child.sigkill()
            _ = child.wait()
            try check(url)
        }
        return output
    }

    /// Copies `pristine` to `url` and starts `strata migrate` on the copy to `model`.
    static func startMigration(
        _ pristine: URL, copiedTo url: URL, model: URL, in directory: TemporaryDirectory
    ) throws -> ChildProcess {
        try FileManager.default.copyItem(at: pristine, to: url)
        return try ChildProcess(
            try BuiltExecutable.url(named: "strata").path, ["migrate", url.path, "--model", model.path],
            stderrPath: directory.path + "/\(url.deletingPathExtension().lastPathComponent).err")
    }

    /// The output of `strata migrate --dry-run` from `pristine` to `model`, which must succeed.
    static func dryRun(_ pristine: URL, to model: URL, in directory: TemporaryDirectory) throws -> String {
        let (end, output) = try ChildProcess.run(
            try BuiltExecutable.url(named: "strata").path,
            ["migrate", pristine.path, "--model", model.path, "--dry-run"],
            stderrPath: directory.path + "/dry.err")
        #expect(end == .exited(0), "\(output)")
        return output
    }

    /// ``migrateThenKill(_:to:in:iterations:check:)`` with a `check` that returns whether the store
    /// holds the new model: the complete run must leave the new store, a killed one either store.
    ///
    /// - Returns: the output of the complete run.
    @discardableResult
    static func migrateThenKillLeavingOldOrNew(
        _ pristine: URL, to model: URL, in directory: TemporaryDirectory, check: (URL) throws -> Bool
    ) throws -> String {
        var completed = false
        return try migrateThenKill(pristine, to: model, in: directory) { url in
            let isNew = try check(url)
            if !completed { #expect(isNew, "the complete run leaves the new store") }
            completed = true
        }
    }

    /// Whether the store at `url` holds the second of `models` (its metadata names exactly one).
    static func holdsNewModel(_ url: URL, models: [URL]) throws -> Bool {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        let old = try ManagedObjectModel(checkedContentsOf: models[0]),
            new = try ManagedObjectModel(checkedContentsOf: models[1])
        let isNew = new.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        #expect(
            isNew != old.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata),
            "the metadata names one model")
        return isNew
    }

    /// Opens the store at `url` with the model it holds and migration off, then with the new model
    /// migrating, and runs `body` with a context on each (and whether that one migrated).
    static func openBothWays(
        _ url: URL, models: [URL], isNew: Bool,
        _ body: (ManagedObjectContext, PersistentStoreCoordinator, Bool) throws -> Void
    ) throws {
        for (model, migrating) in [(models[isNew ? 1 : 0], false), (models[1], true)] {
            let coordinator = PersistentStoreCoordinator(
                managedObjectModel: try ManagedObjectModel(checkedContentsOf: model))
            let store = try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url,
                options: [
                    MigratePersistentStoresAutomaticallyOption: migrating,
                    InferMappingModelAutomaticallyOption: migrating,
                ])
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait { try body(context, coordinator, migrating) }
            try coordinator.remove(store)
        }
    }
}
