import Dispatch
import Foundation
import StrataTestSupport
import StrataSynchronization
import Synchronization
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Failing system calls under the store: a failed append throws and leaves no trace, a failed
/// `fdatasync` stops writes until reopen, and no failure ever leaves a commit half there.
@Suite struct FaultInjectionTests {
    /// How the append of the failing commit goes wrong.
    enum AppendFault: String, CaseIterable, Sendable {
        /// `pwrite` fails with `EIO`.
        case writeEIO
        /// `pwrite` fails with `ENOSPC`.
        case writeENOSPC
        /// `pwrite` writes 100 bytes, then the next call fails with `EIO`.
        case shortWriteThenEIO
        /// `pwrite` writes 1 byte, then the next call fails with `ENOSPC`.
        case shortWriteThenENOSPC
        /// Allocating the segment's space ahead of the log fails with `ENOSPC`.
        case preallocateENOSPC

        /// The faults to arm.
        var faults: [FaultyIO.Fault] {
            switch self {
            case .writeEIO: return [.segmentWrite(.fail(EIO))]
            case .writeENOSPC: return [.segmentWrite(.fail(ENOSPC))]
            case .shortWriteThenEIO: return [.segmentWrite(.short(100)), .segmentWrite(.fail(EIO))]
            case .shortWriteThenENOSPC: return [.segmentWrite(.short(1)), .segmentWrite(.fail(ENOSPC))]
            case .preallocateENOSPC: return [.preallocate(ENOSPC)]
            }
        }

        /// The code the commit must throw.
        var code: StoreError.Code {
            switch self {
            case .writeEIO, .shortWriteThenEIO: return .io
            case .writeENOSPC, .shortWriteThenENOSPC, .preallocateENOSPC: return .diskFull
            }
        }

        /// The `errno` the error's cause must carry.
        var errno: Int32 { code == .io ? EIO : ENOSPC }
    }

    /// Durable commits, no background thread, the given seam, quiet logs.
    static func configuration(_ io: any FileIO = SystemFileIO()) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .durable
        configuration.backgroundMaintenance = false
        configuration.io = io
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Opens a store, makes three commits, closes and reopens it with `io`, so that the next
    /// commit also allocates the segment's space ahead of the log.
    static func storeWithThreeCommits(_ url: URL, io: FaultyIO) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration(io))
        for index in 0..<3 { try commit(index, to: store) }
        try store.close()
        return try Store.open(at: url, schema: TestSchema.schema, configuration: configuration(io))
    }

    /// Commit `index`: a department and five employees; after the first, also an update of the
    /// previous commit's second employee and a delete of its third.
    static func commit(_ index: Int, to store: Store) throws {
        try store.commit(transaction(index, store))
    }

    /// The transaction of ``commit(_:to:)``, with keys from `store`.
    static func transaction(_ index: Int, _ store: Store) -> Transaction {
        transaction(index, store, touching: index > 0 ? index - 1 : nil)
    }

    /// Commit `index`'s inserts, with an update and a delete of employees of commit `touching`
    /// when it is not `nil`.
    static func transaction(_ index: Int, _ store: Store, touching: Int?) -> Transaction {
        var transaction = Transaction(author: "fault \(index)")
        let department = store.allocateKeys(for: 0).lowerBound
        transaction.insert(0, key: department, row: Row([.string("Department \(index)"), .double(Double(index))]))
        for key in store.allocateKeys(for: 1, count: 5) {
            transaction.insert(1, key: key, row: TestSchema.employee(Int(key), department: department))
        }
        if let touching {
            let previous = Int64(5 * touching)
            transaction.update(
                1, key: previous + 2, row: TestSchema.employee(500 + index, department: department),
                changedColumns: [0, 1, 2, 3])
            transaction.delete(1, key: previous + 3)
        }
        return transaction
    }

    /// The failing commit throws `io`/`diskFull` naming the segment; earlier commits stay readable;
    /// the segment holds nothing of it; the store keeps committing with the next sequence; after
    /// reopening with the real system calls, everything but the failed commit is there.
    @Test(arguments: AppendFault.allCases)
    func failedAppend(fault: AppendFault) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Self.storeWithThreeCommits(url, io: io)
        let before = try StoreContents(store!)
        let (segment, end) = store!.state.withLock { ($0.files[$0.activeSegment]!.path, $0.activeEnd) }

        io.arm(fault.faults)
        let failing = Self.transaction(3, store!)
        let error = #expect(throws: StoreError.self) { try store!.commit(failing) }
        #expect(io.armedFaults == 0, "every armed fault fired")
        #expect(error?.code == fault.code)
        #expect(error?.path == segment)
        #expect((error?.cause as? SystemCallError)?.errno == fault.errno)
        #expect(error?.message.isEmpty == false)
        #expect(try StoreContents(store!) == before, "the failed commit changed what the store shows")
        #expect(try Self.fileSize(segment) == end, "the failed append left bytes in the segment")

        #expect(
            try store!.commit(Self.transaction(4, store!, touching: 2)) == 4, "the store goes on with the next sequence"
        )
        let after = try StoreContents(store!)
        #expect(after.rows[1].count == before.rows[1].count + 4)
        store = nil
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let reopened = try StoreContents(store!)
        #expect(reopened == after, "\(reopened.difference(from: after))")
        #expect(reopened.history == [1, 2, 3, 4])
        try store!.close()
    }

    /// A failed undo of a short write (the `ftruncate` fails too) stops writes; reopening
    /// truncates the torn bytes and keeps every earlier commit.
    @Test func failedUndoOfAShortWrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Self.storeWithThreeCommits(url, io: io)
        let before = try StoreContents(store!)
        io.arm([.segmentWrite(.short(200)), .segmentWrite(.fail(EIO)), .truncate(EIO)])
        let error = #expect(throws: StoreError.self) { try store!.commit(Self.transaction(3, store!)) }
        #expect(io.armedFaults == 0)
        #expect(error?.code == .io)
        let stopped = #expect(throws: StoreError.self) { try store!.commit(Self.transaction(4, store!)) }
        #expect(stopped?.code == .failStopped)
        #expect(try StoreContents(store!) == before)
        try store!.close()
        store = nil
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let reopened = try StoreContents(store!)
        #expect(reopened == before, "\(reopened.difference(from: before))")
        #expect(try store!.commit(Self.transaction(3, store!)) == 4)
        try store!.close()
    }

    /// After `fdatasync` fails, the commit throws `io`, later commits and checkpoints throw
    /// `failStopped`, reads still work; after reopening, the failed commit is there whole or not
    /// at all, and the store commits again.
    @Test func failedSync() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Self.storeWithThreeCommits(url, io: io)
        let before = try StoreContents(store!)
        let segment = store!.state.withLock { $0.files[$0.activeSegment]!.path }
        io.arm([.dataSync(EIO)])
        let failing = Self.transaction(3, store!)
        let error = #expect(throws: StoreError.self) { try store!.commit(failing) }
        #expect(io.armedFaults == 0)
        #expect(error?.code == .io)
        #expect(error?.path == segment)
        for attempt in 0..<3 {
            let stopped = #expect(throws: StoreError.self) { try store!.commit(Self.transaction(4 + attempt, store!)) }
            #expect(stopped?.code == .failStopped)
        }
        #expect((#expect(throws: StoreError.self) { try store!.checkpoint() })?.code == .failStopped)
        #expect(try StoreContents(store!) == before, "reads after the failed sync")
        try store!.close()
        store = nil

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let reopened = try StoreContents(store!)
        let inserted = failing.operations.compactMap { operation -> (Int, PrimaryKey)? in
            if case .insert(let entity, let key, _) = operation { return (entity, key) }
            return nil
        }
        let present = inserted.filter { reopened.rows[$0.0][$0.1] != nil }
        if present.isEmpty {
            #expect(reopened == before, "\(reopened.difference(from: before))")
        } else {
            #expect(present.count == inserted.count, "the failed commit is half there")
            #expect(reopened.lastSequence == 4)
            #expect(reopened.history == [1, 2, 3, 4])
            #expect(reopened.rows[1][12] == TestSchema.employee(503, department: inserted[0].1))
            #expect(reopened.rows[1][13] == nil)
            #expect(reopened.rows[1].count == before.rows[1].count + 4)
        }
        let next = reopened.lastSequence + 1
        #expect(try store!.commit(Self.transaction(9, store!, touching: nil)) == next)
        try store!.close()
    }

    /// Commits from several threads, grouped, while some appends fail: each commit either
    /// returns a sequence and is there, or throws `io` and is not; the sequences of the commits
    /// that returned are exactly 1...n; reopening shows the same.
    @Test func failuresAmidGroupCommits() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let io = FaultyIO()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration(io))
        io.arm([
            .pass(3), .segmentWrite(.fail(EIO)), .pass(7), .segmentWrite(.short(50)), .segmentWrite(.fail(EIO)),
            .pass(5), .segmentWrite(.fail(ENOSPC)),
        ])
        let threads = 4
        let commitsPerThread = 20
        let outcomes = Lock<[(keys: [PrimaryKey], result: Result<UInt64, StoreError>)]>([])
        do {
            let shared = store!
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<commitsPerThread {
                    var transaction = Transaction(author: "thread \(thread)")
                    let keys = Array(shared.allocateKeys(for: 1, count: 3))
                    for key in keys {
                        transaction.insert(1, key: key, row: TestSchema.employee(thread * 1_000 + index))
                    }
                    let result = Result { try shared.commit(transaction) }.mapError { $0 as! StoreError }
                    outcomes.withLock { $0.append((keys, result)) }
                }
            }
        }
        #expect(io.armedFaults == 0, "every armed fault fired")
        let all = outcomes.withLock { $0 }
        let sequences = all.compactMap { try? $0.result.get() }.sorted()
        let failures = all.compactMap { outcome -> StoreError? in
            if case .failure(let error) = outcome.result { return error }
            return nil
        }
        #expect(!failures.isEmpty)
        #expect(failures.allSatisfy { $0.code == .io || $0.code == .diskFull }, "\(failures.map(\.code))")
        #expect(
            sequences == Array(1...UInt64(sequences.count)), "the sequences of the commits that returned are not 1...n")
        let contents = try StoreContents(store!)
        for outcome in all {
            let present = outcome.keys.filter { contents.rows[1][$0] != nil }
            switch outcome.result {
            case .success(let sequence): #expect(present.count == 3, "commit \(sequence) is not all there")
            case .failure: #expect(present.isEmpty, "a failed commit is there")
            }
        }
        #expect(contents.rows[1].count == 3 * sequences.count)
        store = nil
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try StoreContents(store!) == contents)
        try store!.close()
    }

    /// A file's size.
    static func fileSize(_ path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).int64Value
    }
}

// MARK: - The fault-injecting seam

/// A ``FileIO`` that forwards to ``SystemFileIO`` and fails on command: armed faults fire in
/// order, each on the next call it applies to. Writes and `ftruncate` faults apply to segment
/// files (`*.log`) only. It can also skip every `fsync`, for tests that do not need durability
/// and open stores thousands of times.
final class FaultyIO: FileIO {
    /// What a segment `pwrite` does.
    enum Write: Sendable {
        /// Fails with this `errno`, writing nothing.
        case fail(Int32)
        /// Writes at most this many bytes and returns that count.
        case short(Int)
    }

    /// One armed fault.
    enum Fault: Sendable {
        /// The next segment `pwrite` misbehaves.
        case segmentWrite(Write)
        /// The next `n` segment `pwrite`s succeed before the next fault applies.
        case pass(Int)
        /// The next `preallocate` fails with this `errno`.
        case preallocate(Int32)
        /// The next `preallocate` signals ``preallocationHeld`` and waits for
        /// ``releasePreallocation()`` before it runs.
        case holdPreallocate
        /// The next `fdatasync` fails with this `errno`.
        case dataSync(Int32)
        /// The next segment `ftruncate` fails with this `errno`.
        case truncate(Int32)
        /// The next segment `pread` on another thread than the one that armed it (a background
        /// thread's, such as the block cache's warm-up) signals ``backgroundReadHeld`` and waits
        /// for ``releaseBackgroundRead()`` before it runs.
        case holdBackgroundRead
    }

    private struct State {
        var paths: [Int32: String] = [:]
        var faults: [Fault] = []
        var unmatchedCloses: [Int32] = []
        /// The thread that armed the last faults.
        var armingThread: pthread_t?
    }

    private let base = SystemFileIO()
    private let state = Lock(State())
    /// Whether `fsync` and `fdatasync` reach the disk.
    let syncs: Bool
    /// Signalled when a `preallocate` armed with ``Fault/holdPreallocate`` starts waiting.
    let preallocationHeld = DispatchSemaphore(value: 0)
    private let preallocationReleased = DispatchSemaphore(value: 0)
    /// Signalled when a `pread` armed with ``Fault/holdBackgroundRead`` starts waiting.
    let backgroundReadHeld = DispatchSemaphore(value: 0)
    private let backgroundReadReleased = DispatchSemaphore(value: 0)

    /// Creates the seam; with `syncs: false` every sync succeeds without doing anything.
    init(syncs: Bool = true) { self.syncs = syncs }

    /// Arms `faults`, after those still armed.
    func arm(_ faults: [Fault]) {
        state.withLock { state in
            state.faults += faults
            state.armingThread = pthread_self()
        }
    }

    /// Lets the `preallocate` held by ``Fault/holdPreallocate`` go on.
    func releasePreallocation() { preallocationReleased.signal() }

    /// Lets the `pread` held by ``Fault/holdBackgroundRead`` go on.
    func releaseBackgroundRead() { backgroundReadReleased.signal() }

    /// The number of armed faults that have not fired yet.
    var armedFaults: Int { state.withLock { $0.faults.count } }

    /// The paths of the descriptors opened through the seam and not closed yet.
    var openFiles: [String] { state.withLock { $0.paths.values.sorted() } }

    /// Descriptors closed through the seam that it had not opened or had closed already: a
    /// double close, which can close a descriptor another thread has just opened.
    var unmatchedCloses: [Int32] { state.withLock { $0.unmatchedCloses } }

    /// Removes and returns the first armed fault if `applies` says it is for this call.
    private func take(_ applies: (Fault) -> Bool) -> Fault? {
        state.withLock { state in
            guard let first = state.faults.first, applies(first) else { return nil }
            state.faults.removeFirst()
            return first
        }
    }

    private func isSegment(_ fd: Int32) -> Bool {
        state.withLock { $0.paths[fd]?.hasSuffix(".log") ?? false }
    }

    func open(_ path: String, flags: Int32, mode: UInt32) throws -> Int32 {
        let fd = try base.open(path, flags: flags, mode: mode)
        state.withLock { $0.paths[fd] = path }
        return fd
    }

    func close(_ fd: Int32) {
        state.withLock { state in
            if state.paths.removeValue(forKey: fd) == nil { state.unmatchedCloses.append(fd) }
        }
        base.close(fd)
    }

    func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let background = state.withLock { $0.armingThread.map { pthread_equal($0, pthread_self()) == 0 } ?? false }
        if background, isSegment(fd),
            case .holdBackgroundRead? = take({ if case .holdBackgroundRead = $0 { return true } else { return false } })
        {
            backgroundReadHeld.signal()
            backgroundReadReleased.wait()
        }
        return try base.pread(fd, into: buffer, at: offset)
    }

    func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        guard isSegment(fd) else { return try base.pwrite(fd, bytes, at: offset) }
        let fault = state.withLock { state -> Write? in
            switch state.faults.first {
            case .pass(let count)?:
                if count <= 1 { state.faults.removeFirst() } else { state.faults[0] = .pass(count - 1) }
                return nil
            case .segmentWrite(let write)?:
                state.faults.removeFirst()
                return write
            default:
                return nil
            }
        }
        switch fault {
        case .fail(let code)?: throw SystemCallError("pwrite", errno: code)
        case .short(let count)?:
            return try base.pwrite(fd, UnsafeRawBufferPointer(rebasing: bytes.prefix(count)), at: offset)
        case nil: return try base.pwrite(fd, bytes, at: offset)
        }
    }

    func fsync(_ fd: Int32) throws {
        if syncs { try base.fsync(fd) }
    }

    func fdatasync(_ fd: Int32) throws {
        if case .dataSync(let code)? = take({ if case .dataSync = $0 { return true } else { return false } }) {
            throw SystemCallError("fdatasync", errno: code)
        }
        if syncs { try base.fdatasync(fd) }
    }

    func ftruncate(_ fd: Int32, to size: Int64) throws {
        if isSegment(fd),
            case .truncate(let code)? = take({ if case .truncate = $0 { return true } else { return false } })
        {
            throw SystemCallError("ftruncate", errno: code)
        }
        try base.ftruncate(fd, to: size)
    }

    func preallocate(_ fd: Int32, offset: Int64, length: Int64) throws {
        let fault = take {
            switch $0 {
            case .preallocate, .holdPreallocate: return true
            default: return false
            }
        }
        switch fault {
        case .preallocate(let code)?:
            throw SystemCallError("posix_fallocate", errno: code)
        case .holdPreallocate?:
            preallocationHeld.signal()
            preallocationReleased.wait()
        default:
            break
        }
        try base.preallocate(fd, offset: offset, length: length)
    }

    func size(_ fd: Int32) throws -> Int64 { try base.size(fd) }
    func rename(_ from: String, to: String) throws { try base.rename(from, to: to) }
    func unlink(_ path: String) throws { try base.unlink(path) }
    func makeDirectory(_ path: String) throws { try base.makeDirectory(path) }
    func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    func lockExclusively(_ fd: Int32) throws -> Bool { try base.lockExclusively(fd) }
    func unlock(_ fd: Int32) { base.unlock(fd) }
}
