import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A compaction run that does not start the log keeps the deletes it copies as markers, and
/// compacting again copies them again. Behind a first segment that nothing makes dead, runs
/// would never start the log and the markers of every delete ever made would pile up; a run takes
/// the segments before it when they are no larger, starts the log, and drops them.
@Suite struct CompactionMarkerTests {
    /// Segments of 16 KiB, no history (so that compaction keeps only live rows), no background
    /// work.
    private static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 16 << 10
        configuration.historyTracking = false
        return configuration
    }

    @Test func deletesCompactedBehindALiveFirstSegmentLeaveNoMarkersBehind() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        // The first segment: one department nothing deletes, sealed.
        var first = Transaction()
        let department = store.allocateKeys(for: TestSchema.department, count: 1).lowerBound
        first.insert(TestSchema.department, key: department, row: Row([.string("Research"), .double(1)]))
        try store.commit(first)
        try store.appendLock.withLock { _ in try store.rollSegment() }
        var sizes: [Int64] = []
        for cycle in 0..<8 {
            let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 300))
            var insert = Transaction()
            for key in keys { insert.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key))) }
            try store.commit(insert)
            var delete = Transaction()
            for key in keys { delete.delete(TestSchema.employee, key: key) }
            try store.commit(delete)
            let report = try store.compact()
            #expect(report.segmentsCompacted > 0, "cycle \(cycle) compacted")
            sizes.append(report.bytesAfter)
        }
        #expect(sizes.last! <= sizes[0], "the log after each cycle, in bytes: \(sizes)")
        try store.close()
        // Replayed from the log alone, the deleted rows stay deleted and the department is there.
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store.count(TestSchema.employee) == 0)
        #expect(try store.read(TestSchema.department, key: department)?.values.first == .string("Research"))
        try store.close()
    }
}
