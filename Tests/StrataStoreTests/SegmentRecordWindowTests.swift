import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Compaction reads a segment's records through a window of the file: whatever the window's size,
/// it yields the records a read of the whole file does, and a damaged record still fails.
@Suite struct SegmentRecordWindowTests {
    /// A closed store whose first segment holds small records and one of a few dozen KB; its path
    /// and store id.
    static func makeStore(_ directory: TemporaryDirectory) throws -> (path: String, storeID: UUID) {
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var key: Int64 = 1
        for round in 0..<30 {
            var transaction = Transaction()
            for _ in 0..<(round == 12 ? 2_000 : 3) {
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
                key += 1
            }
            try store.commit(transaction)
        }
        let storeID = store.storeID
        try store.close()
        return (url.path + "/segments", storeID)
    }

    /// The records of `bytes` (a whole segment), as offsets and bytes.
    static func records(wholeFile bytes: [UInt8]) throws -> [(Int64, [UInt8])] {
        var records: [(Int64, [UInt8])] = []
        var position = SegmentFile.headerSize
        while position < bytes.count {
            let length = bytes.withUnsafeBytes {
                ParsedRecord.declaredLength(UnsafeRawBufferPointer(rebasing: $0[position...]))
            }
            records.append((Int64(position), Array(bytes[position..<(position + length)])))
            position += length
        }
        return records
    }

    @Test("windows of any size yield the records of the whole file, a record larger than the window included")
    func windowsYieldEveryRecord() throws {
        let directory = TemporaryDirectory()
        let (segments, storeID) = try Self.makeStore(directory)
        let file = try SegmentFile.open(id: 1, directory: segments, storeID: storeID, writable: false, io: SystemFileIO())
        let size = try file.size()
        let expected = try Self.records(wholeFile: file.read(at: 0, count: Int(size)))
        #expect(expected.count == 30)
        #expect(expected.contains { $0.1.count > 5_000 })
        for windowSize in [1, 500, 4_096, SegmentRecordWindow.size] {
            var window = SegmentRecordWindow(file: file, fileSize: size, windowSize: windowSize)
            var position = Int64(SegmentFile.headerSize)
            var read: [(Int64, [UInt8])] = []
            while position < size {
                let (bytes, start) = try window.record(at: position)
                let parsed = bytes.withUnsafeBytes { Store.parseRecord(in: UnsafeRawBufferPointer(rebasing: $0[start...])) }
                guard case .success(let record) = parsed else {
                    Issue.record("the record at \(position) does not parse through a window of \(windowSize) bytes")
                    return
                }
                read.append((position, Array(bytes[start..<(start + record.length)])))
                position += Int64(record.length)
            }
            #expect(read.map(\.0) == expected.map(\.0), "window of \(windowSize) bytes")
            #expect(read.map(\.1) == expected.map(\.1), "window of \(windowSize) bytes")
        }
    }

    @Test("a record cut short by the end of the file is returned short, so that its parse fails")
    func aRecordPastTheEndIsShort() throws {
        let directory = TemporaryDirectory()
        let (segments, storeID) = try Self.makeStore(directory)
        let file = try SegmentFile.open(id: 1, directory: segments, storeID: storeID, writable: false, io: SystemFileIO())
        let records = try Self.records(wholeFile: file.read(at: 0, count: Int(try file.size())))
        let last = try #require(records.last)
        // The file as if it ended 10 bytes into its last record.
        var window = SegmentRecordWindow(file: file, fileSize: last.0 + 10, windowSize: 4_096)
        let (bytes, start) = try window.record(at: last.0)
        #expect(bytes.count - start == 10)
        let parsed = bytes.withUnsafeBytes { Store.parseRecord(in: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        guard case .failure = parsed else {
            Issue.record("a record cut short parsed")
            return
        }
    }
}
