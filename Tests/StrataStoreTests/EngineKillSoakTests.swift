import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The engine's operations of the kill soak (``KillSoak``): `strata compact` and `strata replay`
/// killed with SIGKILL at random moments, round after round on stores kept across rounds; after
/// each kill the store opens, holds exactly what it must, and verifies clean once closed.
@Suite struct EngineKillSoakTests {
    /// Rows the compacted store holds; each round rewrites about a fifth of them.
    static let compactedRows = 4_000
    /// Transactions of the replay's source.
    static let replayedTransactions = 2_000

    /// Each round updates, deletes and inserts rows (closing the store cleanly, so what is there
    /// is acknowledged), then kills `strata compact` on it: the store then holds the same rows.
    @Test func compactionKilledAnywhereKeepsTheRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.store("Compacted")
        let strata = try BuiltExecutable.url(named: "strata").path
        var soak = KillSoak(operation: "compaction", unit: "rows", estimate: .milliseconds(300))
        var generator = SplitMix64(seed: 0xC0_4AC7)
        var model: [Int64: ModelRow] = [:]
        var round: Int64 = 0
        while soak.continues {
            round += 1
            try Self.churn(url, model: &model, round: round, using: &generator)
            let started = ContinuousClock.now
            let child = try ChildProcess(strata, ["compact", url.path], stderrPath: directory.path + "/compact.err")
            let end = soak.kill(child, after: soak.nextDelay(using: &generator), started: started)
            #expect(end == .signalled(SIGKILL) || end == .exited(0), "strata compact \(end): \(child.stderrTail)")
            guard let store = Self.reopen(url, soak: &soak) else { break }
            var actual: [Int64: ModelRow] = [:]
            try store.scan(0) { key, row in
                if actual.updateValue(Torture.state(key: key, row: row) ?? ModelRow.malformed, forKey: key) != nil {
                    soak.duplicated += 1
                }
            }
            soak.lost += model.keys.filter { actual[$0] != model[$0] }.count
            soak.duplicated += actual.keys.filter { model[$0] == nil }.count
            soak.acknowledged += model.count
            #expect(CrashHarness.difference(expected: model, actual: actual) == nil, "round \(round)")
            try store.close()
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Each round kills `strata replay` into a destination kept across rounds: it holds a prefix
    /// of the source's transactions, each once, with its cursor at the last, never fewer than the
    /// round before; the next round resumes it, and one that runs to the end leaves the source's
    /// copy (the destination then starts again empty).
    @Test func replayKilledAnywhereResumesWithoutDuplicates() throws {
        let directory = TemporaryDirectory()
        let sourceURL = directory.store("Source")
        let count = Self.replayedTransactions
        try HistoryReplayBatchTests.source(at: sourceURL, count: count).close()
        let url = directory.store("Destination")
        let strata = try BuiltExecutable.url(named: "strata").path
        var soak = KillSoak(operation: "strata replay", unit: "transactions", estimate: .milliseconds(500))
        var generator = SplitMix64(seed: 0x4E_9A7)
        var applied = 0
        while soak.continues {
            let started = ContinuousClock.now
            let child = try ChildProcess(
                strata, ["replay", sourceURL.path, url.path], stderrPath: directory.path + "/replay.err")
            let end = soak.kill(child, after: soak.nextDelay(using: &generator), started: started)
            #expect(end == .signalled(SIGKILL) || end == .exited(0), "strata replay \(end): \(child.stderrTail)")
            // The replay opens the source read-only; open it here only once the child is gone.
            let source = try Store.open(
                at: sourceURL, schema: TestSchema.schema, configuration: TestSchema.configuration())
            defer { try? source.close() }
            if !FileManager.default.fileExists(atPath: url.path) {
                // Killed before it created the destination.
                continue
            }
            guard let destination = Self.reopen(url, schema: TestSchema.schema, soak: &soak) else { break }
            let authors = try HistoryReplayKillTests.checkPrefix(destination, source: source, count: count)
            if authors.count < applied { soak.lost += applied - authors.count }
            if Set(authors).count != authors.count { soak.duplicated += authors.count - Set(authors).count }
            soak.acknowledged += max(0, authors.count - applied)
            applied = authors.count
            if end == .exited(0) {
                #expect(authors.count == count, "a replay that ended applied everything")
                #expect(try destination.read(TestSchema.employee, key: 1) == source.read(TestSchema.employee, key: 1))
            }
            try destination.close()
            soak.verify { try Store.verify(at: url).problems.map(\.description) }
            if !soak.isClean { break }
            if applied == count {
                try FileManager.default.removeItem(at: url)
                applied = 0
            }
        }
        print(soak.figures)
        #expect(soak.isClean && soak.kills > 0, "\(soak.summary)")
    }

    /// Opens the store at `url` after a kill, or counts it unopenable (and records why).
    static func reopen(_ url: URL, schema: Schema = Torture.schema, soak: inout KillSoak) -> Store? {
        do {
            return try Store.open(at: url, schema: schema, configuration: Torture.testConfiguration())
        } catch {
            soak.recordUnopenable("the store does not open after a kill: \(error)")
            return nil
        }
    }

    /// One round's changes to the compacted store, committed and closed: fills it to
    /// ``compactedRows`` rows, then updates a tenth of them, deletes a twentieth and inserts as
    /// many, in transactions of 50 changes, so that sealed segments hold dead rows. The history
    /// of the rounds before is deleted, as a service prunes what its consumers have read: the
    /// compaction then turns their records into the live rows they leave, and copies only this
    /// round's transactions whole, so the store keeps its size over thousands of rounds.
    static func churn(
        _ url: URL, model: inout [Int64: ModelRow], round: Int64, using generator: inout SplitMix64
    ) throws {
        let store = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        var changes: [(Int64, ModelRow?)] = []
        let keys = model.keys.shuffled(using: &generator)
        for key in keys.prefix(compactedRows / 10) {
            var row = model[key]!
            row.version += 1
            row.lastBatch = round
            changes.append((key, row))
        }
        let deleted = keys.dropFirst(compactedRows / 10).prefix(compactedRows / 20)
        for key in deleted { changes.append((key, nil)) }
        // Back to compactedRows rows, and at least one insert.
        let inserts = max(1, compactedRows - (model.count - deleted.count))
        for key in store.allocateKeys(for: 0, count: inserts) {
            changes.append((key, ModelRow(batch: round, batchSize: Int64(inserts), lastBatch: round, version: 0)))
        }
        var firstSequence: UInt64?
        for part in stride(from: 0, to: changes.count, by: 50) {
            var transaction = Transaction(author: "churn \(round)")
            for (key, row) in changes[part..<min(part + 50, changes.count)] {
                if let row, model[key] == nil {
                    transaction.insert(0, key: key, row: Torture.row(key: key, row))
                } else if let row {
                    transaction.update(0, key: key, row: Torture.row(key: key, row), changedColumns: [2, 3, 4])
                } else {
                    transaction.delete(0, key: key)
                }
            }
            let sequence = try store.commit(transaction)
            if firstSequence == nil { firstSequence = sequence }
            for (key, row) in changes[part..<min(part + 50, changes.count)] { model[key] = row }
        }
        if let firstSequence { try store.deleteHistory(before: firstSequence) }
        try store.close()
    }
}

extension ModelRow {
    /// What a row that is not a well-formed torture row counts as: it matches no model row.
    static let malformed = ModelRow(batch: -1, batchSize: -1, lastBatch: -1, version: -1)
}
