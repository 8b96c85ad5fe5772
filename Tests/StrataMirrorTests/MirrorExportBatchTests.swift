import Foundation
import Logging
import PostgresNIO
import Strata
import StrataStore
import StrataTestSupport
import Testing
@testable import StrataMirror

/// An asynchronous instance exports its pending saves as one batch (one statement): the log
/// gets every save, in order, and `strata_object` (what snapshots and version checks read) the
/// image each object has after its last save in the batch.
@Suite(
    "Mirror export batches", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorExportBatchTests {
    @Test(
        "saves exported together (an update of an object exported before, an insert then update, a delete) leave each object's last image and reach another instance"
    )
    func batchLeavesLastImages() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let first = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        first.startTailing()
        for (name, count) in [("x", Int64(101)), ("y", 202), ("z", 303)] { try first.insert(name, count: count) }
        #expect(try await waitForLog(3, postgres))
        try await first.close()

        // Saved while nothing exports, then exported in one batch.
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous)
        try a.setCount(1010, of: "x")
        try a.insert("w", count: 404)
        try a.setCount(4040, of: "w")
        let context = a.container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "z")
            context.delete(try context.fetch(request)[0])
            try context.save()
        }
        a.startTailing()
        #expect(try await waitForLog(7, postgres))
        #expect(try await queryInt("SELECT max(pos) - min(pos) + 1 FROM strata_txn", on: postgres) == 7)
        #expect(try await waitUntil { try a.mirror.cursor() == 7 })

        let images = try await objectImages(postgres)
        #expect(images == ["x": [1010], "y": [202], "w": [4040]])

        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous)
        b.startTailing()
        #expect(try await b.waitUntil { $0 == ["x": 1010, "y": 202, "w": 4040] })
        #expect(try a.items() == ["x": 1010, "y": 202, "w": 4040])
        try await a.close()
        try await b.close()
    }

    /// Each item image in `strata_object` by its name: the integers it holds above 100 (its
    /// count; the row's other integers are its entity tag and such).
    private func objectImages(_ postgres: PostgresConnection.Configuration) async throws -> [String: [Int64]] {
        let logger = Logger(label: "test")
        let connection = try await PostgresConnection.connect(configuration: postgres, id: 0, logger: logger)
        var images: [String: [Int64]] = [:]
        do {
            for try await data in try await connection.query("SELECT row FROM strata_object", logger: logger).decode(
                Data.self)
            {
                let values = try JSONDecoder().decode([TaggedValue].self, from: data).map(\.value)
                guard let name = values.lazy.compactMap({ if case .string(let name) = $0 { name } else { nil } }).first
                else { continue }
                images[name] = values.compactMap { if case .int(let number) = $0, number > 100 { number } else { nil } }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return images
    }

    /// Waits until `condition` holds (at most 20 s).
    private func waitUntil(_ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<400 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
