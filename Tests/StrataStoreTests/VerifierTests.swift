import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

@Suite struct VerifierTests {
    /// A configuration with small segments, so that a few commits seal several.
    private static func smallSegments() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 1024
        return configuration
    }

    /// Commits `count` transactions of 20 employees each (and one department first).
    private static func fill(_ store: Store, transactions count: Int) throws {
        if store.count(TestSchema.department) == 0 {
            var first = Transaction(author: "verifier")
            first.insert(
                TestSchema.department, key: store.allocateKeys(for: TestSchema.department).lowerBound,
                row: Row([.string("R&D"), .double(1e6)]))
            try store.commit(first)
        }
        for _ in 0..<count {
            var transaction = Transaction(author: "verifier", contextName: "fill")
            for key in store.allocateKeys(for: TestSchema.employee, count: 20) {
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key), department: 1))
            }
            try store.commit(transaction)
        }
    }

    /// The live segments' paths in log order, read from the manifest.
    private static func segmentPaths(_ url: URL) throws -> [String] {
        let manifest = try Manifest.decode(
            Array(try Data(contentsOf: url.appendingPathComponent("manifest"))), path: "manifest")
        return manifest.segments.map { url.path + "/segments/" + SegmentFile.fileName($0) }
    }

    /// Inverts the byte at `offset` of the file at `path`.
    private static func flipByte(at offset: Int, of path: String) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    @Test func cleanStoreHasNoProblems() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.smallSegments())
        try Self.fill(store, transactions: 6)
        try store.checkpoint()
        var changes = Transaction()
        changes.update(TestSchema.employee, key: 3, row: TestSchema.employee(300), changedColumns: [0, 1, 2, 3])
        changes.delete(TestSchema.employee, key: 4)
        try store.commit(changes)
        try store.deleteHistory(before: 3)
        try store.compact()
        try Self.fill(store, transactions: 3)

        var progress: [(Int64, Int64)] = []
        let whileOpen = try Store.verify(at: url) { progress.append(($0, $1)) }
        #expect(whileOpen.problems == [])
        #expect(whileOpen.skippedChecks == [])
        #expect(whileOpen.checkpointChecked)
        #expect(whileOpen.segmentsChecked == store.segments().count)
        #expect(whileOpen.segmentsChecked > 2)
        #expect(whileOpen.rowsChecked >= store.count(TestSchema.employee))
        #expect(whileOpen.recordsChecked > 0 && whileOpen.blocksChecked > 0)
        #expect(progress.last.map { $0.0 == $0.1 } == true)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.0 <= $1.0 })

        try store.close()
        let closed = try Store.verify(at: url)
        #expect(closed.isClean)
        #expect(closed.skippedChecks == [])
    }

    @Test func flippedByteInSealedSegmentNamesFileAndOffset() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.smallSegments())
        try Self.fill(store, transactions: 6)
        try store.close()
        let segments = try Self.segmentPaths(url)
        try #require(segments.count >= 2)
        let damaged = segments[0]
        let flipped = SegmentFile.headerSize + 100
        try Self.flipByte(at: flipped, of: damaged)
        let before = try Data(contentsOf: URL(fileURLWithPath: damaged))

        let report = try Store.verify(at: url)
        let problem = try #require(report.problems.first)
        #expect(problem.file == damaged)
        #expect(problem.offset >= Int64(SegmentFile.headerSize) && problem.offset <= Int64(flipped))
        #expect(problem.message.contains("checksum"))
        #expect(!report.skippedChecks.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == before)
    }

    /// A zeroed length field is skipped to the next record that parses, not looped on.
    @Test func zeroedLengthFieldIsSkipped() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.fill(store, transactions: 3)
        try store.close()
        let segment = try #require(try Self.segmentPaths(url).first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes.replaceSubrange(SegmentFile.headerSize..<(SegmentFile.headerSize + 4), with: [0, 0, 0, 0])
        try bytes.write(to: URL(fileURLWithPath: segment))

        let report = try Store.verify(at: url)
        let problem = try #require(report.problems.first)
        #expect(problem.file == segment)
        #expect(problem.offset == Int64(SegmentFile.headerSize))
        #expect(report.recordsChecked == 3)
    }

    @Test func flippedByteInCheckpointNamesCheckpoint() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.fill(store, transactions: 3)
        try store.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
        let checkpoint = url.path + "/checkpoints/" + (try #require(names.first { $0.hasSuffix(".ckpt") }))
        try Self.flipByte(at: 30, of: checkpoint)

        let report = try Store.verify(at: url)
        #expect(report.checkpointChecked)
        #expect(report.problems.count == 1)
        let problem = try #require(report.problems.first)
        #expect(problem.file == checkpoint)
        #expect(problem.offset == Int64(Checkpoint.prefixSize), "the offset of the section holding the byte")
        #expect(problem.message.contains("checkpoint"))
    }

    @Test func truncatedTailIsReportedAsTornTail() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.fill(store!, transactions: 2)
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let active = try #require(try Self.segmentPaths(url).last)
        let end = try #require(try FileManager.default.attributesOfItem(atPath: active)[.size] as? Int)
        try Self.fill(store!, transactions: 1)
        store = nil
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: active))
        try handle.truncate(atOffset: UInt64(end + 20))
        try handle.close()

        let report = try Store.verify(at: url)
        #expect(report.problems.count == 1)
        let problem = try #require(report.problems.first)
        #expect(problem.file == active)
        #expect(problem.offset == Int64(end))
        #expect(problem.message.hasPrefix("torn tail (would be truncated on open)"))
        #expect(problem.message.contains("20 bytes"))
        #expect(report.skippedChecks == [])
        #expect(try FileManager.default.attributesOfItem(atPath: active)[.size] as? Int == end + 20)
    }

    @Test func checkpointWhoseIndexDisagreesWithTheLogIsReported() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.fill(store, transactions: 2)
        try store.close()
        let manifest = try Manifest.decode(
            Array(try Data(contentsOf: url.appendingPathComponent("manifest"))), path: "manifest")
        let file = url.path + "/checkpoints/" + Checkpoint.fileName(try #require(manifest.checkpoint))
        var checkpoint = try StoreFiles.openCheckpoint(file)
        checkpoint.state.fetchIndexes = try Checkpoint.readFetchIndexes(
            checkpoint.fetchIndexSections, schema: TestSchema.schema)
        try checkpoint.state.entities[TestSchema.employee].prepare(5)
        checkpoint.state.entities[TestSchema.employee].set(5, to: .absent, size: 0)
        let io = SystemFileIO()
        try io.replaceAtomically(file, directory: url.path + "/checkpoints") { fd in
            _ = try checkpoint.write(schema: TestSchema.schema, to: fd, io: io)
        }

        let report = try Store.verify(at: url)
        #expect(report.problems.count == 2)
        #expect(report.problems.allSatisfy { $0.file == file && $0.offset > 16 })
        #expect(
            report.problems.contains {
                $0.message.hasPrefix("Employee has 39 live rows in the checkpoint but 40 in the log up to it")
            })
        #expect(
            report.problems.contains {
                $0.message.contains("object index of Employee differs for 1 keys; key 5 is absent in the checkpoint")
            })
        #expect(report.skippedChecks.count == 1)
    }

    @Test func keyWhoseOnlyLoggedChangeIsAnUpdateAfterCompactionIsSound() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.smallSegments())
        try Self.fill(store, transactions: 4)
        var update = Transaction()
        var row = TestSchema.employee(1, department: 1)
        row[2] = .string("notes changed; salary and department, both indexed, are not")
        update.update(TestSchema.employee, key: 1, row: row, changedColumns: [2])
        try store.commit(update)
        try Self.fill(store, transactions: 2)
        try store.deleteHistory(before: store.lastSequence + 1)
        #expect(try store.compact().segmentsCompacted > 0)
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(row[1])) == [1])
        try store.close()
        #expect(try Store.verify(at: url).problems == [])

        let manifest = try Manifest.decode(
            Array(try Data(contentsOf: url.appendingPathComponent("manifest"))), path: "manifest")
        let checkpoint = url.path + "/checkpoints/" + Checkpoint.fileName(try #require(manifest.checkpoint))
        try FileManager.default.removeItem(atPath: checkpoint)
        let replayed = try Store.verify(at: url)
        #expect(replayed.problems.map(\.file) == [checkpoint])
        #expect(replayed.skippedChecks == [])
    }
}
