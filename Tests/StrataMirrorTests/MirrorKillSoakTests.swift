import Foundation
import PostgresNIO
import Strata
import StrataStore
import StrataTestSupport
import Testing
@testable import StrataMirror

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The mirror's operation of the kill soak (``KillSoak``): an instance applying the shared log
/// (`strata-mirror-demo follow`) killed with SIGKILL at a random moment, round after round on one
/// store until it has caught up (then a new instance starts from nothing): its store then holds
/// exactly the log up to its recorded cursor, nothing applied twice, never less than the round
/// before, and verifies clean once closed. One private PostgreSQL server serves the whole run.
@Suite(.enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorKillSoakTests {
    /// Saves in the shared log, each its own log entry and, applied, its own local transaction
    /// (fewer in the short version of `make test`).
    static let logSaves = KillSoak.isSoaking ? 600 : 150

    /// One save of the writer as a follower must apply it: the item inserted or updated.
    struct LoggedSave {
        /// The save's log position.
        var position: Int64
        /// The item's name.
        var name: String
        /// Its count after the save.
        var count: Int64
    }

    @Test func mirrorApplyKilledAnywhereHoldsTheLogUpToItsCursor() async throws {
        let folder = TemporaryDirectory()
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let log = try await Self.writeLog(folder: folder, postgres: postgres)
        let head = log.last!.position
        let demo = try BuiltExecutable.url(named: "strata-mirror-demo").path
        var soak = KillSoak(operation: "mirror apply", unit: "log entries", estimate: .seconds(1))
        var generator = SplitMix64(seed: 0x41_220)
        var follower = 1
        var applied: Int64 = 0
        while soak.continues {
            let name = "follower\(follower)"
            let url = folder.url.appendingPathComponent("\(name).strata")
            let started = ContinuousClock.now
            let child = try ChildProcess(
                demo, ["follow", url.path, postgres.unixSocketPath!, postgres.database!, name],
                stderrPath: folder.path + "/follow.err")
            let end = soak.kill(child, after: soak.nextDelay(using: &generator), started: started)
            #expect(end == .signalled(SIGKILL) || end == .exited(0), "the follower \(end): \(child.stderrTail)")
            guard FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest").path) else {
                continue  // killed before it created its store
            }
            var cursor: Int64 = 0
            do {
                let (position, items) = try Self.contents(of: url)
                cursor = position
                var expected: [String: Int64] = [:]
                for save in log where save.position <= cursor { expected[save.name] = save.count }
                let names = items.map(\.name)
                soak.duplicated += names.count - Set(names).count
                soak.duplicated += Set(names).subtracting(expected.keys).count
                let held = Dictionary(items.map { ($0.name, $0.count) }, uniquingKeysWith: { first, _ in first })
                soak.lost += expected.filter { held[$0.key] != $0.value }.count
                soak.lost += Int(max(0, applied - cursor))
                soak.acknowledged += Int(max(0, cursor - applied))
                #expect(held == expected, "\(name) at cursor \(cursor) holds what the log holds up to there")
                #expect(end != .exited(0) || cursor == head, "a follower that ended caught up")
                applied = cursor
            } catch {
                soak.recordUnopenable("\(name)'s store does not open after a kill: \(error)")
            }
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
            if cursor == head {
                try FileManager.default.removeItem(at: url)
                follower += 1
                applied = 0
            }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Writes ``logSaves`` saves into the shared log at `postgres` through an instance `writer`:
    /// save `k` inserts `item k`, and every third one also sets the count of `item k/3` to `k`.
    /// Each save has a context name of its own, so a follower applies it as a transaction of its own.
    static func writeLog(
        folder: TemporaryDirectory, postgres: PostgresConnection.Configuration
    ) async throws -> [LoggedSave] {
        let writer = try MirrorInstance("writer", folder: folder, postgres: postgres)
        var log: [LoggedSave] = []
        for k in 1...Int64(logSaves) {
            let context = writer.container.newBackgroundContext()
            context.name = "save \(k)"
            var saved = [LoggedSave(position: 0, name: "item \(k)", count: 0)]
            try context.performAndWait {
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(k)", forKey: "name")
                if k % 3 == 0 {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.predicate = FetchPredicate(key: "name", .equalTo, "item \(k / 3)")
                    try context.fetch(request)[0].setValue(k, forKey: "count")
                    saved.append(LoggedSave(position: 0, name: "item \(k / 3)", count: k))
                }
                try context.save()
            }
            let position = try await queryInt("SELECT pos FROM strata_head", on: postgres)
            log += saved.map { LoggedSave(position: position, name: $0.name, count: $0.count) }
        }
        try await writer.close()
        return log
    }

    /// The cursor and the items (name and count, duplicates included) of the follower's store at
    /// `url`, opened without the mirror.
    static func contents(of url: URL) throws -> (cursor: Int64, items: [(name: String, count: Int64)]) {
        let model = mirrorTestModel()
        MirrorState.addEntity(to: model)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .strata, at: url)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait {
            let state = try context.fetch(FetchRequest<ManagedObject>(entityName: MirrorState.entityName))
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map {
                (name: $0.value(forKey: "name") as? String ?? "", count: $0.value(forKey: "count") as? Int64 ?? 0)
            }
            return (state.first?.value(forKey: "position") as? Int64 ?? 0, items)
        }
    }
}
