import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A replay writes many source transactions in one append (a batch, synced once at its end);
/// each stays its own record carrying the replay cursor. So a replay killed at any point, or a
/// batch append torn anywhere, leaves a destination whose cursor names exactly the source
/// transactions it holds, and the next replay applies the rest once.
@Suite struct HistoryReplayKillTests {
    /// The destination at `url` holds a prefix of `source`'s transactions, each once, and its
    /// cursor names the last of them; a replay then makes it the source's copy.
    static func checkPrefixThenResume(_ url: URL, source: Store, count: Int) throws {
        let destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let authors = try checkPrefix(destination, source: source, count: count)
        let expected = (1...count).map { "writer \($0)" }
        #expect(try destination.replayHistory(from: source) == count - authors.count)
        #expect(try destination.history().map(\.author) == expected)
        for key in [1, count / 2, count - 1, count] {
            #expect(
                try destination.read(TestSchema.employee, key: Int64(key))
                    == source.read(TestSchema.employee, key: Int64(key)))
        }
        #expect(try destination.replayHistory(from: source) == 0)
        try destination.close()
    }

    /// Checks that `destination` holds a prefix of `source`'s `count` transactions
    /// (`HistoryReplayBatchTests.source`), each once, and that its replay cursor names the last of
    /// them; returns their authors.
    @discardableResult
    static func checkPrefix(_ destination: Store, source: Store, count: Int) throws -> [String] {
        let authors = try destination.history().map { $0.author ?? "" }
        let expected = (1...count).map { "writer \($0)" }
        #expect(Array(expected.prefix(authors.count)) == authors, "a prefix of the source's transactions, none twice")
        #expect(
            destination.historyConsumers[Store.replayConsumerName(source: source.storeID)]?.sequence ?? 0
                == UInt64(authors.count))
        return authors
    }

    @Test func aTornBatchAppendLeavesAPrefixThatResumes() throws {
        let directory = TemporaryDirectory()
        let count = 300
        let source = try HistoryReplayBatchTests.source(at: directory.store("Source"), count: count)
        let url = directory.store("Destination")
        let pristine = directory.path + "/pristine"
        let segment: String
        let records: [Range<Int64>]
        do {
            var destination: Store? = try Store.open(
                at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
            #expect(try destination!.replayHistory(from: source) == count)
            #expect(destination!.statistics.commitGroups == 1, "one append for the whole batch")
            let (entries, id) = destination!.state.withLock { ($0.history, $0.activeSegment) }
            #expect(entries.count == count && entries.allSatisfy { $0.segment == id })
            segment = url.path + "/segments/" + SegmentFile.fileName(id)
            records = entries.map { $0.offset..<($0.offset + Int64($0.length)) }
            // Dropped without closing, as a crash would.
            destination = nil
            try FileManager.default.copyItem(atPath: url.path, toPath: pristine)
        }
        // Cuts inside the first record, in the middle of the append, and one byte short of its end.
        for cut in [records[0].lowerBound + 10, records[count / 2].lowerBound + 40, records[count - 1].upperBound - 1] {
            try FileManager.default.removeItem(at: url)
            try FileManager.default.copyItem(atPath: pristine, toPath: url.path)
            try StoreFiles.deleteCheckpoints(url)
            let handle = try #require(FileHandle(forUpdatingAtPath: segment))
            try handle.truncate(atOffset: UInt64(cut))
            try handle.close()
            try Self.checkPrefixThenResume(url, source: source, count: count)
        }
        try source.close()
    }

    @Test func aReplayKilledAnywhereResumesWithoutDuplicates() throws {
        let directory = TemporaryDirectory()
        let count = 6_000
        let sourceURL = directory.store("Source")
        try HistoryReplayBatchTests.source(at: sourceURL, count: count).close()
        let strata = try BuiltExecutable.url(named: "strata").path
        let complete = directory.store("Complete")
        let started = ContinuousClock.now
        let (end, output) = try ChildProcess.run(
            strata, ["replay", sourceURL.path, complete.path], stderrPath: directory.path + "/complete.err")
        let duration = ContinuousClock.now - started
        #expect(end == .exited(0))
        #expect(output == "replayed \(count) transactions\n")
        let source = try Store.open(at: sourceURL, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.checkPrefixThenResume(complete, source: source, count: count)
        try source.close()

        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<6 {
            let url = directory.store("Killed\(iteration)")
            let child = try ChildProcess(
                strata, ["replay", sourceURL.path, url.path], stderrPath: directory.path + "/killed\(iteration).err")
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            Thread.sleep(forTimeInterval: seconds * Double.random(in: 0.05...1, using: &generator))
            child.sigkill()
            _ = child.wait()
            // The source is opened read-only by the replay; open it here only once the child is gone.
            let source = try Store.open(
                at: sourceURL, schema: TestSchema.schema, configuration: TestSchema.configuration())
            try Self.checkPrefixThenResume(url, source: source, count: count)
            try source.close()
        }
    }
}
