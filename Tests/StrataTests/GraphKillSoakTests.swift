import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The object graph's operations of the kill soak (``KillSoak``): durable saves from many
/// contexts, batch insert, update and delete requests, and `strata migrate`, each in a child
/// process killed with SIGKILL at a random moment, round after round; after each kill the store
/// opens, holds exactly the acknowledged work, and verifies clean once closed.
@Suite struct GraphKillSoakTests {
    /// Employees in the batch requests' store that no request touches.
    static let ballast = 3_000
    /// Items in the migrated store.
    static let migratedItems = 600

    /// Kills `strata-graph-probe save-concurrently` (1 to 8 contexts) after a random number of
    /// acknowledged saves, on a store kept across rounds: every acknowledged save is there, none
    /// twice (``ConcurrentSaveCrashTests/checkThenClear(store:acknowledged:)``).
    @Test func durableSavesKilledAnywhereLoseNothingAcknowledged() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Saves")
        try GraphModel.container(at: url).close()
        var soak = KillSoak(operation: "durable save", unit: "saves", estimate: .milliseconds(300))
        var generator = SplitMix64(seed: 0x5A7E5)
        while soak.continues {
            let (acknowledged, _, _) = try ConcurrentSaveCrashTests.killSaver(
                store: url, contexts: Int.random(in: 1...8, using: &generator),
                after: Int.random(in: 1...120, using: &generator))
            soak.recordKill()
            do {
                let (lost, duplicated) = try ConcurrentSaveCrashTests.checkThenClear(
                    store: url, acknowledged: acknowledged)
                soak.lost += lost
                soak.duplicated += duplicated
                soak.acknowledged += acknowledged.count
            } catch {
                soak.recordUnopenable("the store does not open after a kill: \(error)")
            }
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Kills `strata-graph-probe batch-requests` (groups of a batch insert of 200 employees, a
    /// batch update of them, a batch delete of them) at a random moment: each request that returned
    /// is fully there, the one killed is fully there or fully absent, never half, and none beyond
    /// the one begun.
    @Test func batchRequestsKilledAnywhereAreAllOrNothing() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Batches")
        let probe = try BuiltExecutable.url(named: "strata-graph-probe").path
        do {
            let container = try GraphModel.container(at: url)
            let insert = BatchInsertRequest(
                entityName: "Employee",
                objects: (0..<Self.ballast).map {
                    ["name": "ballast \($0)", "salary": Int64($0), "notes": "ballast"] as [String: Any]
                })
            _ = try BatchDeleteRequestTests.execute(insert, in: container)
            try container.close()
        }
        var soak = KillSoak(operation: "batch insert/update/delete", unit: "requests", estimate: .seconds(1))
        var generator = SplitMix64(seed: 0xBA7C4)
        var round = 0
        while soak.continues {
            round += 1
            let started = ContinuousClock.now
            let child = try ChildProcess(
                probe, [url.path, "batch-requests", String(round), "3"], stderrPath: folder.path + "/batch.err")
            let end = soak.kill(child, after: soak.nextDelay(using: &generator), started: started)
            #expect(end == .signalled(SIGKILL) || end == .exited(0), "the probe \(end): \(child.stderrTail)")
            do {
                try Self.checkBatches(url, round: round, output: child.outputText, soak: &soak)
            } catch {
                soak.recordUnopenable("the store does not open after a kill: \(error)")
            }
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Kills `strata migrate` (a rewrite in place: a type widened, an attribute added, one removed)
    /// at a random moment on a copy of a store of the first model: the store is then the old one or
    /// the new one, every item there once with its URI (``MigrationCrashTests/check(_:models:uris:)``).
    @Test func lightweightMigrationKilledAnywhereLeavesTheOldOrTheNewStore() throws {
        let directory = TemporaryDirectory()
        let models = try MigrationKillHarness.writeModels(
            [MigrationCrashTests.version1, MigrationCrashTests.version2], in: directory)
        let (pristine, uris) = try MigrationKillHarness.pristineStore(of: models[0], in: directory) { context in
            (0..<Self.migratedItems).map { i in
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(i)", forKey: "name")
                item.setValue(Int32(i), forKey: "value")
                item.setValue("note \(i)", forKey: "note")
                return item
            }
        }
        var soak = KillSoak(operation: "lightweight migration", unit: "items", estimate: .milliseconds(800))
        var generator = SplitMix64(seed: 0x3161)
        let url = directory.store("Migrated")
        while soak.continues {
            try? FileManager.default.removeItem(at: url)
            let child = try MigrationKillHarness.startMigration(
                pristine, copiedTo: url, model: models[1], in: directory)
            let end = soak.kill(child, after: soak.nextDelay(using: &generator), started: .now)
            #expect(end == .signalled(SIGKILL) || end == .exited(0), "strata migrate \(end): \(child.stderrTail)")
            do {
                _ = try MigrationCrashTests.check(url, models: models, uris: uris)
                // The check migrated the store to the new model: count its items there.
                let container = try GraphModel.container(
                    at: url, model: try ManagedObjectModel(checkedContentsOf: models[1]))
                let context = container.newBackgroundContext()
                let names = try context.performAndWait {
                    try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map {
                        $0.value(forKey: "name") as? String ?? ""
                    }
                }
                try container.close()
                soak.lost += uris.count - Set(names).intersection((0..<uris.count).map { "item \($0)" }).count
                soak.duplicated += names.count - Set(names).count
                soak.acknowledged += uris.count
            } catch {
                soak.recordUnopenable("the store does not open after a kill: \(error)")
            }
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Checks the batch requests' store after round `round`'s probe printed `output`, counting
    /// what is lost (a returned request not there, or a request half there) and duplicated
    /// (objects beyond a group's, or a request applied that had not begun); then deletes the
    /// round's employees with a batch delete, so the store keeps its size.
    static func checkBatches(_ url: URL, round: Int, output: String, soak: inout KillSoak) throws {
        // Requests in order: 1 insert, 2 update, 3 delete. Whole lines only: the kill may cut the last.
        let levels = ["insert": 1, "update": 2, "delete": 3]
        var begun: [String: Int] = [:]
        var done: [String: Int] = [:]
        for line in output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, let level = levels[fields[1]] else {
                Issue.record("the probe printed an unexpected line: \(line)")
                continue
            }
            if fields[0] == "begin" { begun[fields[2]] = level } else { done[fields[2]] = level }
        }
        soak.acknowledged += done.values.reduce(0, +)
        let container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        let notes = try context.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = try FetchPredicate(checkedFormat: "notes BEGINSWITH %@", "b\(round).")
            return try context.fetch(request).map { $0.notes ?? "" }
        }
        var counts: [String: (inserted: Int, updated: Int)] = [:]
        for note in notes {
            let parts = note.split(separator: " ")
            let tag = String(parts[0])
            counts[tag, default: (0, 0)].inserted += parts.last == "inserted" ? 1 : 0
            counts[tag, default: (0, 0)].updated += parts.last == "updated" ? 1 : 0
        }
        let size = 200
        for tag in Set(counts.keys).union(begun.keys) {
            let (inserted, updated) = counts[tag] ?? (0, 0)
            let level: Int
            switch (inserted, updated) {
            case (size, 0): level = 1
            case (0, size): level = 2
            case (0, 0): level = begun[tag] == 3 ? 3 : 0
            default:
                Issue.record("group \(tag) is half-applied: \(inserted) inserted, \(updated) updated")
                if inserted + updated > size { soak.duplicated += 1 } else { soak.lost += 1 }
                continue
            }
            if level < done[tag] ?? 0 {
                Issue.record("group \(tag) is at request \(level), but request \(done[tag]!) returned")
                soak.lost += 1
            }
            if level > begun[tag] ?? 0 {
                Issue.record("group \(tag) is at request \(level), but only request \(begun[tag] ?? 0) began")
                soak.duplicated += 1
            }
        }
        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = try FetchPredicate(checkedFormat: "notes BEGINSWITH %@", "b\(round).")
        _ = try BatchDeleteRequestTests.execute(BatchDeleteRequest(fetchRequest: fetch), in: container)
        #expect(
            try context.performAndWait { try context.count(for: Employee.fetchRequest()) } == ballast,
            "the ballast is whole")
        try container.close()
    }
}
