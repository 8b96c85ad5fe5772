import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A group of one record of a megabyte or more (a bulk insert) is written from the record's own
/// bytes after a sealed copy of its header: it reads back, with its fetch index, before and
/// after reopening, into an empty store or one with rows; a write that fails after the header
/// leaves nothing of the commit, and a torn one that cannot be undone is cut off on reopen.
@Suite struct RecordWrittenInPlaceTests {
    /// 30,000 employee inserts with notes that barely compress: a record well over 1 MiB.
    static func bulkInsert(_ store: Store) -> Transaction {
        var transaction = Transaction(author: "bulk")
        for key in store.allocateKeys(for: TestSchema.employee, count: 30_000) {
            transaction.insert(
                TestSchema.employee, key: key,
                row: Row([
                    .string("Employee \(key)"), .int(30_000 + key * 7_919 % 170_000),
                    .string(UUID().uuidString + UUID().uuidString), .null,
                ]))
        }
        return transaction
    }

    /// The active segment's path and end.
    static func end(_ store: Store) -> (segment: String, end: Int64) {
        store.state.withLock { ($0.files[$0.activeSegment]!.path, $0.activeEnd) }
    }

    @Test(arguments: [false, true])
    func aLargeRecordReadsBackAfterReopen(storeHasRows: Bool) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: FaultInjectionTests.configuration())
        if storeHasRows {
            for index in 0..<3 { try FaultInjectionTests.commit(index, to: store!) }
        }
        let before = Self.end(store!).end
        try store!.commit(Self.bulkInsert(store!))
        #expect(
            Self.end(store!).end - before >= Int64(SealedGroup.recordWrittenInPlace),
            "the record is large enough to be written in place")
        let written = try StoreContents(store!)
        #expect(written.rows[TestSchema.employee].count == 30_000 + (storeHasRows ? 13 : 0))
        #expect(
            try store!.countKeys(TestSchema.employee, column: 1, matching: .range(lower: nil, upper: nil))
                == written.rows[TestSchema.employee].count)
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: FaultInjectionTests.configuration())
        let reopened = try StoreContents(store!)
        #expect(reopened == written, "\(reopened.difference(from: written))")
        try store!.close()
    }

    /// A commit before the bulk insert allocates the segment's space ahead, so that the bulk
    /// insert's only segment writes are its header and its body.
    static func storeReadyForBulkInsert(_ url: URL, io: FaultyIO) throws -> Store {
        let store = try Store.open(
            at: url, schema: TestSchema.schema, configuration: FaultInjectionTests.configuration(io))
        try FaultInjectionTests.commit(0, to: store)
        return store
    }

    @Test func aFailedWriteAfterTheHeaderLeavesNoTrace() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Self.storeReadyForBulkInsert(url, io: io)
        let before = try StoreContents(store!)
        let (segment, end) = Self.end(store!)
        io.arm([.pass(1), .segmentWrite(.fail(EIO))])
        let error = #expect(throws: StoreError.self) { try store!.commit(Self.bulkInsert(store!)) }
        #expect(io.armedFaults == 0, "the header and the body were written apart")
        #expect(error?.code == .io)
        #expect(try StoreContents(store!) == before)
        #expect(try FaultInjectionTests.fileSize(segment) == end, "the failed append left bytes in the segment")
        #expect(try store!.commit(Self.bulkInsert(store!)) == 2, "the store goes on with the next sequence")
        let after = try StoreContents(store!)
        store = nil
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: FaultInjectionTests.configuration())
        #expect(try StoreContents(store!) == after)
        try store!.close()
    }

    @Test func aTornBodyThatCannotBeUndoneIsCutOffOnReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Self.storeReadyForBulkInsert(url, io: io)
        let before = try StoreContents(store!)
        io.arm([.pass(1), .segmentWrite(.short(100_000)), .segmentWrite(.fail(EIO)), .truncate(EIO)])
        let error = #expect(throws: StoreError.self) { try store!.commit(Self.bulkInsert(store!)) }
        #expect(io.armedFaults == 0)
        #expect(error?.code == .io)
        let stopped = #expect(throws: StoreError.self) { try store!.commit(FaultInjectionTests.transaction(1, store!)) }
        #expect(stopped?.code == .failStopped)
        try store!.close()
        store = nil
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: FaultInjectionTests.configuration())
        let reopened = try StoreContents(store!)
        #expect(reopened == before, "\(reopened.difference(from: before))")
        #expect(try store!.commit(Self.bulkInsert(store!)) == 2)
        try store!.close()
    }
}
