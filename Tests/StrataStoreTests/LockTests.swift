import Foundation
import StrataTestSupport
import Synchronization
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One writer at a time, in this process or another; readers open read-only beside it.
@Suite struct LockTests {
    /// Relaxed commits, no background thread, quiet logs.
    static func configuration(readOnly: Bool = false) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .relaxed
        configuration.backgroundMaintenance = false
        configuration.readOnly = readOnly
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Runs `strata-torture open PATH [--read-only]`; returns how it ended and its output.
    static func openInHelper(_ url: URL, readOnly: Bool = false, scratch: String) throws -> (ChildExit, String) {
        try ChildProcess.run(
            try Torture.executable(), ["open", url.path] + (readOnly ? ["--read-only"] : []),
            stderrPath: scratch + "/open-helper.err")
    }

    /// A second writing open in this process gets `locked` naming the lock file; the failed
    /// attempts do not release the first writer's lock; after it closes, a new writer opens.
    @Test func secondWriterInThisProcess() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let writer = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try FaultInjectionTests.commit(0, to: writer)
        for _ in 0..<2 {
            let error = #expect(throws: StoreError.self) {
                _ = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
            }
            #expect(error?.code == .locked)
            #expect(error?.path == url.path + "/lock")
            #expect(error?.message.isEmpty == false)
        }
        #expect(
            (#expect(throws: StoreError.self) {
                _ = try Store.open(at: url, schema: nil, configuration: Self.configuration())
            })?.code == .locked)
        #expect(try writer.commit(FaultInjectionTests.transaction(1, writer)) == 2, "the writer goes on")
        let contents = try StoreContents(writer)
        try writer.close()

        let next = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try StoreContents(next) == contents)
        #expect(try next.commit(FaultInjectionTests.transaction(2, next)) == 3)
        try next.close()
    }

    /// Another process gets `locked` while this one writes, even after failed attempts in this
    /// process; it opens read-only meanwhile, and for writing once the writer closes.
    @Test func secondWriterProcess() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let writer = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try FaultInjectionTests.commit(0, to: writer)
        try FaultInjectionTests.commit(1, to: writer)
        let (exit, output) = try Self.openInHelper(url, scratch: directory.path)
        #expect(exit == .exited(3), "\(output)")
        #expect(output.hasPrefix("locked \(url.path)/lock"), "\(output)")
        _ = try? Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(
            try Self.openInHelper(url, scratch: directory.path).0 == .exited(3),
            "a failed open in this process released the lock")
        let (readExit, readOutput) = try Self.openInHelper(url, readOnly: true, scratch: directory.path)
        #expect(readExit == .exited(0), "\(readOutput)")
        #expect(readOutput == "opened rows=2 sequence=2\n")
        try writer.close()
        let (laterExit, laterOutput) = try Self.openInHelper(url, scratch: directory.path)
        #expect(laterExit == .exited(0), "\(laterOutput)")
        #expect(laterOutput == "opened rows=2 sequence=2\n")
    }

    /// While another process writes, this one gets `locked` and can open read-only and read
    /// what was committed; once the writer dies (SIGKILL), the lock is free.
    @Test func writerInAnotherProcess() throws {
        let directory = TemporaryDirectory()
        let url = directory.store("Torture")
        // Seed 3: writers only, no compaction deleting segments under the reader.
        let child = try ChildProcess(
            try Torture.executable(), ["write", url.path, "--seed", "3"], stderrPath: directory.path + "/writer.err")
        defer {
            child.sigkill()
            child.wait()
        }
        try #require(
            child.waitForOutput("\ncommit ", timeout: .seconds(30)), "the writer does not commit: \(child.stderrTail)")
        let error = #expect(throws: StoreError.self) {
            _ = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        }
        #expect(error?.code == .locked)
        var configuration = Torture.testConfiguration()
        configuration.readOnly = true
        let reader = try Store.open(at: url, schema: Torture.schema, configuration: configuration)
        #expect(reader.lastSequence > 0)
        #expect(reader.count(0) > 0)
        try reader.scan(0) { key, row in #expect(Torture.state(key: key, row: row) != nil, "row \(key)") }
        try reader.close()
        child.sigkill()
        #expect(child.wait() == .signalled(SIGKILL))
        let writer = try Store.open(at: url, schema: Torture.schema, configuration: Torture.testConfiguration())
        #expect(writer.count(0) > 0)
        try writer.close()
    }

    /// Closing (or dropping) a store releases its lock at once, even while another thread spawns
    /// processes: each spawned child holds a copy of every descriptor until its `exec`, so closing
    /// the lock file alone would leave the lock held.
    @Test func lockIsReleasedWhileProcessesSpawn() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let executable = try Torture.executable()
        let stop = Atomic<Bool>(false)
        let spawned = Atomic<Int>(0)
        let spawner = Thread {
            while !stop.load(ordering: .relaxed) {
                _ = try? ChildProcess.run(executable, [], stderrPath: "/dev/null")
                spawned.add(1, ordering: .relaxed)
            }
        }
        spawner.start()
        defer { stop.store(true, ordering: .relaxed) }
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        for round in 0..<200 {
            if round.isMultiple(of: 2) { try store!.close() }
            store = nil
            store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        }
        try store!.close()
        #expect(spawned.load(ordering: .relaxed) > 0)
    }

    /// A read-only open works while the writer holds the lock, sees what was committed (also
    /// after it opened, on a new open), refuses writes, and leaves every file as it was, even a
    /// torn tail, which only a writer truncates.
    @Test func readOnlyBesideTheWriter() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let writer = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        for index in 0..<3 { try FaultInjectionTests.commit(index, to: writer) }
        let reader = try Store.open(
            at: url, schema: TestSchema.schema, configuration: Self.configuration(readOnly: true))
        #expect(try StoreContents(reader) == StoreContents(writer))
        #expect(
            (#expect(throws: StoreError.self) { try reader.commit(FaultInjectionTests.transaction(3, reader)) })?.code
                == .readOnly)
        #expect((#expect(throws: StoreError.self) { try reader.checkpoint() })?.code == .readOnly)
        try FaultInjectionTests.commit(3, to: writer)
        let later = try Store.open(at: url, schema: nil, configuration: Self.configuration(readOnly: true))
        #expect(try StoreContents(later) == StoreContents(writer))
        try later.close()
        try reader.close()

        // A torn tail: read-only opens skip it and truncate nothing.
        let (segment, end) = writer.state.withLock { ($0.files[$0.activeSegment]!.path, $0.activeEnd) }
        let contents = try StoreContents(writer)
        try writer.close()
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        try handle.seek(toOffset: UInt64(end))
        try handle.write(contentsOf: Data([0x40, 0, 0, 0, 1, 2, 3]))
        try handle.close()
        let before = try CorruptionTests.snapshot(url.path)
        let torn = try Store.open(at: url, schema: nil, configuration: Self.configuration(readOnly: true))
        #expect(try StoreContents(torn) == contents)
        try torn.close()
        #expect(try CorruptionTests.snapshot(url.path) == before, "a read-only open changed files")

        let next = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try FaultInjectionTests.fileSize(segment) == end, "the writer truncates the torn tail")
        #expect(try next.commit(FaultInjectionTests.transaction(4, next)) == 5)
        try next.close()
    }
}
