import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A crash in the middle of appending a record leaves a torn tail: the active segment ends
/// inside the last record. Opening truncates it and keeps exactly the commits before.
@Suite struct TornTailTests {
    /// A store after a few commits, copied aside, with where its last record is.
    struct Fixture {
        /// Holds everything; removed at the end.
        let directory = TemporaryDirectory()
        /// The store.
        let url: URL
        /// A copy of the store as the last commit left it.
        let pristine: String
        /// The active segment's path, relative to the store directory.
        let segment: String
        /// Where the last record starts and ends in the active segment.
        let lastRecord: Range<Int64>
        /// The contents before the last commit.
        let before: StoreContents
        /// The contents after it.
        let after: StoreContents

        /// Commits five transactions and a larger sixth (several blocks of two entities, an update
        /// and a delete). With `checkpointBeforeLast`, the store is closed (writing a checkpoint) and
        /// reopened before the sixth, so recovery starts from the checkpoint. The store is then
        /// dropped without closing, as a crash leaves it.
        init(checkpointBeforeLast: Bool) throws {
            url = directory.store()
            pristine = directory.path + "/pristine.strata"
            var store: Store? = try Store.open(
                at: url, schema: TestSchema.schema, configuration: TornTailTests.configuration())
            for index in 0..<5 { try TornTailTests.commit(index, to: store!) }
            if checkpointBeforeLast {
                try store!.close()
                store = try Store.open(at: url, schema: TestSchema.schema, configuration: TornTailTests.configuration())
            }
            before = try StoreContents(store!)
            try TornTailTests.commit(5, to: store!)
            after = try StoreContents(store!)
            let (entry, id) = store!.state.withLock { ($0.history.last!, $0.activeSegment) }
            #expect(entry.sequence == 6 && entry.segment == id, "the last commit is in the active segment")
            #expect(store!.segments().count > 1, "the log has sealed segments too")
            segment = "segments/" + SegmentFile.fileName(id)
            lastRecord = entry.offset..<(entry.offset + Int64(entry.length))
            store = nil
            try FileManager.default.copyItem(atPath: url.path, toPath: pristine)
        }

        /// Puts the store back as the last commit left it.
        func restore() throws {
            try FileManager.default.removeItem(at: url)
            try FileManager.default.copyItem(atPath: pristine, toPath: url.path)
        }

        /// The active segment's size.
        func segmentSize() throws -> Int64 {
            (try FileManager.default.attributesOfItem(atPath: url.path + "/" + segment)[.size] as! NSNumber).int64Value
        }
    }

    /// Relaxed commits, no background thread, small blocks and segments, quiet logs, and no
    /// `fsync` (these tests open stores a thousand times and need no durability).
    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.io = FaultyIO(syncs: false)
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.blockSize = 256
        configuration.segmentSize = 2 << 10
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Commit `index` of the fixture: departments and employees inserted, one updated, one deleted.
    static func commit(_ index: Int, to store: Store) throws {
        var transaction = Transaction(author: "torn tail \(index)")
        let department = store.allocateKeys(for: 0).lowerBound
        transaction.insert(
            0, key: department, row: Row([.string("Department \(department)"), .double(Double(index) * 1e5)]))
        for key in store.allocateKeys(for: 1, count: index == 5 ? 8 : 4) {
            transaction.insert(1, key: key, row: TestSchema.employee(Int(key), department: department))
        }
        if index > 0 {
            transaction.update(
                1, key: Int64(2 * index - 1), row: TestSchema.employee(1_000 + index, department: 1),
                changedColumns: [0, 1, 2, 3])
            transaction.delete(1, key: Int64(2 * index))
        }
        #expect(try store.commit(transaction) == UInt64(index + 1))
    }

    /// For every length the active segment can be cut to inside its last record, opening keeps
    /// exactly the five earlier commits, takes a new commit with the next sequence, and opens
    /// again without truncating anything.
    @Test(arguments: [false, true])
    func everyCutOfTheLastRecord(checkpointBeforeLast: Bool) throws {
        let fixture = try Fixture(checkpointBeforeLast: checkpointBeforeLast)
        #expect(fixture.lastRecord.count > 400, "the last record spans several blocks")
        for length in fixture.lastRecord {
            try fixture.restore()
            #expect(truncate(fixture.url.path + "/" + fixture.segment, off_t(length)) == 0)
            var store: Store? = try Store.open(
                at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
            let recovered = try StoreContents(store!)
            try #require(recovered == fixture.before, "cut at \(length): \(recovered.difference(from: fixture.before))")
            try #require(
                try fixture.segmentSize() == fixture.lastRecord.lowerBound,
                "cut at \(length): the torn bytes are not truncated")
            var transaction = Transaction()
            let key = store!.allocateKeys(for: 0).lowerBound
            transaction.insert(0, key: key, row: Row([.string("after the cut"), .double(1)]))
            try #require(
                try store!.commit(transaction) == 6, "cut at \(length): the new commit does not take sequence 6")
            let expected = try StoreContents(store!)
            store = nil
            let end = try fixture.segmentSize()
            store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
            let reopened = try StoreContents(store!)
            try #require(reopened == expected, "cut at \(length), reopened: \(reopened.difference(from: expected))")
            try #require(reopened.rows[0][key] == Row([.string("after the cut"), .double(1)]))
            try #require(try fixture.segmentSize() == end, "cut at \(length): the second open changed the segment")
        }
        // The uncut copy still holds all six commits.
        try fixture.restore()
        let store = try Store.open(at: fixture.url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try StoreContents(store) == fixture.after)
        try store.close()
    }

    /// Bytes that are not a record.
    enum Garbage: String, CaseIterable, Sendable {
        /// Random bytes.
        case random
        /// A header declaring a record longer than what follows.
        case longHeader
        /// The first 100 bytes of the last record again: an append torn after a copy.
        case tornCopy
        /// Zeros, then a byte: not preallocated space.
        case zerosThenByte
    }

    /// Garbage written after the last record is truncated, after a crash (the space after the log
    /// preallocated) or after a clean close (the file ends at the log), and the store goes on.
    @Test(arguments: Garbage.allCases, [false, true])
    func garbageAfterTheLastRecord(garbage: Garbage, closed: Bool) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        for index in 0..<6 { try Self.commit(index, to: store!) }
        let contents = try StoreContents(store!)
        let (entry, path) = store!.state.withLock { ($0.history.last!, $0.files[$0.activeSegment]!.path) }
        let end = entry.offset + Int64(entry.length)
        if closed { try store!.close() }
        store = nil

        var generator = SplitMix64(seed: 99)
        var bytes: [UInt8]
        switch garbage {
        case .random:
            bytes = (0..<1_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        case .longHeader:
            bytes = [UInt8](repeating: 0xAB, count: 64)
            bytes.replaceSubrange(0..<4, with: [0x00, 0x10, 0x00, 0x00])
        case .tornCopy:
            let handle = try #require(FileHandle(forReadingAtPath: path))
            try handle.seek(toOffset: UInt64(entry.offset))
            bytes = [UInt8](try handle.read(upToCount: 100)!)
            try handle.close()
        case .zerosThenByte:
            bytes = [UInt8](repeating: 0, count: 300) + [1]
        }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(end))
        try handle.write(contentsOf: bytes)
        try handle.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let recovered = try StoreContents(store!)
        #expect(recovered == contents, "\(recovered.difference(from: contents))")
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).int64Value
        #expect(size == end, "the garbage is truncated")
        var transaction = Transaction()
        transaction.delete(1, key: 20)
        #expect(try store!.commit(transaction) == 7)
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(store!.lastSequence == 7)
        #expect(try store!.read(1, key: 20) == nil)
        #expect(store!.count(1) == contents.rows[1].count - 1)
        try store!.close()
    }
}

// MARK: - Comparing whole stores

/// Everything a store shows: rows by scan (checked against reads by key and counts), the keys of
/// every fetch index in order (checked against the rows), the last sequence and the history's
/// sequences.
struct StoreContents: Equatable {
    /// Per entity, the live rows by key.
    var rows: [[PrimaryKey: Row]] = []
    /// Per entity, per indexed column, every key with a non-null value in index order.
    var fetchIndexes: [[Int: [PrimaryKey]]] = []
    /// The newest sequence number.
    var lastSequence: UInt64
    /// The sequence numbers of the retained history.
    var history: [UInt64]

    /// A problem found while reading a store's contents.
    struct Inconsistent: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads everything `store` holds.
    ///
    /// - Throws: ``Inconsistent`` when reads, counts, scans and fetch indexes disagree.
    init(_ store: Store) throws {
        for entity in store.schema.entities {
            var rows: [PrimaryKey: Row] = [:]
            try store.scan(entity.id) { key, row in
                guard rows.updateValue(row, forKey: key) == nil else {
                    throw Inconsistent(description: "\(entity.name) \(key) scanned twice")
                }
            }
            guard store.count(entity.id) == rows.count else {
                throw Inconsistent(description: "\(entity.name): count \(store.count(entity.id)), scan \(rows.count)")
            }
            for (key, row) in rows {
                guard try store.read(entity.id, key: key) == row else {
                    throw Inconsistent(description: "\(entity.name) \(key): read differs from scan")
                }
            }
            var indexes: [Int: [PrimaryKey]] = [:]
            for column in entity.indexedColumns {
                let keys = try store.keys(entity.id, column: column, matching: .range(lower: nil, upper: nil))
                let expected = rows.filter { !$0.value[column].isNull }
                    .sorted {
                        $0.value[column] < $1.value[column]
                            || (!($1.value[column] < $0.value[column]) && $0.key < $1.key)
                    }
                    .map(\.key)
                guard keys == expected else {
                    throw Inconsistent(
                        description:
                            "\(entity.name).\(entity.columns[column].name): the fetch index does not match the rows")
                }
                indexes[column] = keys
            }
            self.rows.append(rows)
            fetchIndexes.append(indexes)
        }
        lastSequence = store.lastSequence
        history = try store.history(after: store.historyFloor).map(\.sequence)
    }

    /// What differs from `other`, in a line.
    func difference(from other: StoreContents) -> String {
        var parts: [String] = []
        if lastSequence != other.lastSequence {
            parts.append("last sequence \(lastSequence), expected \(other.lastSequence)")
        }
        if history != other.history { parts.append("history \(history), expected \(other.history)") }
        for entity in rows.indices where entity < other.rows.count && rows[entity] != other.rows[entity] {
            let missing = other.rows[entity].keys.filter { rows[entity][$0] == nil }.sorted()
            let extra = rows[entity].keys.filter { other.rows[entity][$0] == nil }.sorted()
            let changed = rows[entity].keys.filter {
                other.rows[entity][$0] != nil && other.rows[entity][$0] != rows[entity][$0]
            }.sorted()
            parts.append("entity \(entity): missing \(missing), unexpected \(extra), changed \(changed)")
        }
        if fetchIndexes != other.fetchIndexes { parts.append("fetch indexes differ") }
        return parts.isEmpty ? "no difference" : parts.joined(separator: "; ")
    }
}
