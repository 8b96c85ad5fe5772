import Foundation
import StrataTestSupport
import Testing
@testable import Strata
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#endif

/// Resources running out under the object graph: a full disk and a read-only file system (a
/// small `tmpfs`, mounted by the test), no file descriptor left and no address space left (in a
/// child process, `strata-graph-probe`, which lowers its own limits). In each, a save fails with
/// a `CoreDataError` whose underlying `StoreError` names the cause, reads go on, nothing
/// acknowledged is lost, and the store works again once the resource returns.
@Suite struct ResourceLimitTests {
    /// Characters of notes per saved employee: base64 of random bytes, which LZ4 barely shrinks.
    static let notesSize = 128 << 10

    /// `count` characters that do not compress.
    static func incompressible(_ count: Int, _ generator: inout SplitMix64) -> String {
        let words = (0..<(count * 3 / 32 + 1)).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(count * 3 / 4)) }.base64EncodedString()
    }

    /// Saves an employee named `name` with `notes` in `context`; on failure the context keeps it.
    static func save(_ name: String, notes: String, in context: ManagedObjectContext) throws {
        try context.performAndWait {
            let employee = Employee(context: context)
            employee.name = name
            employee.notes = notes
            try context.save()
        }
    }

    /// Saves employees `prefix0`, `prefix1`, … until a save throws; returns the names saved and
    /// the error. The context keeps the employee that failed.
    static func saveUntilFull(
        _ context: ManagedObjectContext, prefix: String, generator: inout SplitMix64
    ) throws -> (saved: [String], error: CoreDataError) {
        var saved: [String] = []
        for number in 0..<256 {
            let name = "\(prefix)\(number)"
            do {
                try save(name, notes: incompressible(notesSize, &generator), in: context)
                saved.append(name)
            } catch let error as CoreDataError {
                return (saved, error)
            }
        }
        throw Unexpected("256 saves of \(notesSize) bytes fitted on the disk")
    }

    /// The employees of `container` by name, each with its notes' length, read on a new context.
    static func employees(in container: PersistentContainer) throws -> [String: Int] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let employees = try context.fetch(Employee.fetchRequest())
            return Dictionary(employees.map { ($0.name, $0.notes?.count ?? 0) }, uniquingKeysWith: { _, _ in -1 })
        }
    }

    /// The number of employees in `container`, duplicates counted.
    static func count(in container: PersistentContainer) throws -> Int {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.count(for: Employee.fetchRequest()) }
    }

    /// Opens the Company store at `url` as the object-graph tests do, read-only when asked.
    static func container(at url: URL, readOnly: Bool = false) throws -> PersistentContainer {
        guard readOnly else { return try GraphModel.container(at: url) }
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription(url: url)
        description.isReadOnly = true
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        return container
    }

    /// Takes all but `leaving` bytes of the free space of `disk` with a file `filler`.
    ///
    /// The store's maintenance thread may be trying to allocate segment space ahead of the log
    /// meanwhile (a save on the full disk asked for it): that allocation holds pages until it
    /// fails and gives them back, so the filler grows until the free space is `leaving` for good.
    static func fill(_ disk: TmpfsMount, leaving: Int64) throws {
        let path = disk.url.appendingPathComponent("filler").path
        let fd = open(path, O_RDWR | O_CREAT, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let wanted = disk.freeBytes - leaving
            if wanted > 0 {
                var size = stat()
                fstat(fd, &size)
                let result = posix_fallocate(fd, off_t(size.st_size), off_t(wanted))
                try #require(result == 0 || result == ENOSPC, "posix_fallocate: errno \(result)")
            }
            if disk.freeBytes == leaving {
                usleep(20_000)
                if disk.freeBytes == leaving { return }
            } else {
                usleep(10_000)
            }
        }
        Issue.record("the filler could not leave \(leaving) bytes free: \(disk.freeBytes) are")
    }

    /// Gives back the space the filler of ``fill(_:leaving:)`` took.
    static func emptyFiller(of disk: TmpfsMount) {
        unlink(disk.url.appendingPathComponent("filler").path)
    }

    /// A save on a full disk fails with `persistentStoreSave` and the engine's `diskFull`
    /// (`ENOSPC`) as its cause; the context keeps the object; every object saved before reads
    /// back whole; once the disk grows the same save goes through; after closing and reopening
    /// every acknowledged object is there once.
    ///
    /// The disk holds one window of preallocated segment space (``Store/preallocationWindow``)
    /// and 1 MiB: the store opens and allocates its first window; the maintenance thread's next
    /// window does not fit, and the save that needs it fails.
    @Test(.enabled(if: TmpfsMount.isAvailable, "mounting a tmpfs needs Linux and root"))
    func aSaveOnAFullDiskFailsTypedAndLosesNothing() throws {
        let disk = try TmpfsMount(size: Store.preallocationWindow + (1 << 20))
        defer { disk.unmount() }
        let url = disk.url.appendingPathComponent("Company.strata")
        var container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        var generator = SplitMix64(seed: 65)
        let (saved, error) = try Self.saveUntilFull(context, prefix: "e", generator: &generator)
        #expect(saved.count > 8, "the first window holds some saves")
        #expect(error.code == .persistentStoreSave, "\(error)")
        let cause = try #require(error.underlyingError as? StoreError, "\(error)")
        #expect(cause.code == .diskFull, "\(cause)")
        #expect((cause.cause as? SystemCallError)?.errno == ENOSPC, "\(cause)")
        #expect(cause.path?.hasPrefix(url.path) == true, "the error names the segment: \(cause)")
        context.performAndWait {
            #expect(context.hasChanges && context.insertedObjects.count == 1, "the context keeps its changes")
        }
        let expected = Dictionary(uniqueKeysWithValues: saved.map { ($0, Self.notesSize) })
        #expect(try Self.employees(in: container) == expected, "reads go on and every saved object reads back")

        try disk.resize(to: 4 * Store.preallocationWindow)
        try context.performAndWait { try context.save() }
        let failed = "e\(saved.count)"
        let all = expected.merging([failed: Self.notesSize]) { old, _ in old }
        #expect(try Self.employees(in: container) == all)
        try container.close()

        container = try GraphModel.container(at: url)
        #expect(try Self.employees(in: container) == all)
        #expect(try Self.count(in: container) == all.count, "nothing is there twice")
        try container.close()
        #expect(try Store.verify(at: url).isClean)
    }

    /// `compact()` on a full disk fails with `diskFull` and changes nothing; saves, closing on a
    /// full disk and reopening lose nothing; once there is room, compaction goes through.
    ///
    /// The disk is filled by saves until one fails (which leaves the active segment without
    /// space allocated past the log), then by a file leaving `pagesLeft` pages free: with none,
    /// the header of compaction's new active segment cannot be written; with one, the new
    /// segment's file is made but the manifest naming it cannot be written. The store must then
    /// not append to that segment: reopening removes a segment the manifest does not name, with
    /// the commits in it.
    @Test(
        .enabled(if: TmpfsMount.isAvailable, "mounting a tmpfs needs Linux and root"),
        arguments: [0, 1])
    func compactionOnAFullDiskFailsTypedAndLosesNothing(pagesLeft: Int) throws {
        let disk = try TmpfsMount(size: Store.preallocationWindow + (1 << 20))
        defer { disk.unmount() }
        let url = disk.url.appendingPathComponent("Company.strata")
        var container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        var generator = SplitMix64(seed: 66 + UInt64(pagesLeft))
        // Four employees whose notes are then replaced: dead rows for compaction.
        for number in 0..<4 {
            try Self.save("d\(number)", notes: Self.incompressible(Self.notesSize, &generator), in: context)
        }
        let replaced = Self.incompressible(Self.notesSize / 2, &generator)
        try context.performAndWait {
            for employee in try context.fetch(Employee.fetchRequest()) { employee.notes = replaced }
            try context.save()
        }
        let full = try Self.saveUntilFull(context, prefix: "e", generator: &generator)
        let saved = full.saved
        #expect((full.error.underlyingError as? StoreError)?.code == .diskFull, "\(full.error)")
        context.performAndWait { context.rollback() }
        var expected = Dictionary(uniqueKeysWithValues: saved.map { ($0, Self.notesSize) })
        for number in 0..<4 { expected["d\(number)"] = Self.notesSize / 2 }

        let page = Int64(sysconf(Int32(_SC_PAGESIZE)))
        try Self.fill(disk, leaving: Int64(pagesLeft) * page)
        let engine = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
        let compaction = #expect(throws: StoreError.self) { try engine.compact() }
        #expect(compaction?.code == .diskFull, "\(String(describing: compaction))")
        #expect(try Self.employees(in: container) == expected, "reads go on; compaction changed nothing")
        let manifestPath = url.appendingPathComponent("manifest").path
        let named = try Manifest.decode(
            Array(try Data(contentsOf: URL(fileURLWithPath: manifestPath))), path: manifestPath)
        let active = engine.state.withLock { $0.activeSegment }
        #expect(named.segments.contains(active), "saves go to segment \(active); the manifest names \(named.segments)")

        // Room again: a save goes through. The disk fills up again before the store is closed;
        // closing trims the space allocated past the log, which is room for its checkpoint.
        Self.emptyFiller(of: disk)
        try disk.resize(to: 4 * Store.preallocationWindow)
        try Self.save("after", notes: Self.incompressible(Self.notesSize, &generator), in: context)
        expected["after"] = Self.notesSize
        try Self.fill(disk, leaving: 0)
        try container.close()

        Self.emptyFiller(of: disk)
        container = try GraphModel.container(at: url)
        #expect(try Self.employees(in: container) == expected, "every acknowledged save is there after reopening")
        #expect(try Self.count(in: container) == expected.count, "nothing is there twice")
        let reopened = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
        #expect(try reopened.compact().segmentsCompacted > 0, "with room, compaction goes through")
        #expect(try Self.employees(in: container) == expected)
        try container.close()
        #expect(try Store.verify(at: url).isClean)
    }

    /// A store on a file system mounted read-only opens with `isReadOnly` and reads everything;
    /// a save there fails with `persistentStoreSave` and the engine's `readOnly`. Opened without
    /// `isReadOnly` it fails with `persistentStoreOpen`, its cause the engine's `io` with `EROFS`
    /// (the write lock's file cannot be opened) and its message naming the option: Core Data
    /// documents `NSReadOnlyPersistentStoreOption` as the way to open a store that cannot be
    /// written, and promises no fallback. Once the file system is writable again the store opens
    /// for writing and saves.
    @Test(.enabled(if: TmpfsMount.isAvailable, "mounting a tmpfs needs Linux and root"))
    func aReadOnlyFileSystemIsReadAndRefusesSavesTyped() throws {
        let disk = try TmpfsMount(size: 4 * Store.preallocationWindow)
        defer { disk.unmount() }
        let url = disk.url.appendingPathComponent("Company.strata")
        var container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        var generator = SplitMix64(seed: 67)
        for name in ["Ada", "Grace", "Linus"] {
            try Self.save(name, notes: Self.incompressible(Self.notesSize, &generator), in: context)
        }
        let expected = ["Ada": Self.notesSize, "Grace": Self.notesSize, "Linus": Self.notesSize]
        try container.close()
        try disk.setReadOnly(true)

        let opening = #expect(throws: CoreDataError.self) { try GraphModel.container(at: url) }
        #expect(opening?.code == .persistentStoreOpen, "\(String(describing: opening))")
        #expect(
            opening?.message.contains("read-only: add it with isReadOnly") == true, "\(String(describing: opening))")
        let openCause = opening?.underlyingError as? StoreError
        #expect(openCause?.code == .io, "\(String(describing: opening))")
        #expect((openCause?.cause as? SystemCallError)?.errno == EROFS, "\(String(describing: opening))")

        container = try Self.container(at: url, readOnly: true)
        #expect(try Self.employees(in: container) == expected, "a read-only store reads everything")
        let reader = container.newBackgroundContext()
        let error = #expect(throws: CoreDataError.self) {
            try Self.save("Margaret", notes: "", in: reader)
        }
        #expect(error?.code == .persistentStoreSave, "\(String(describing: error))")
        #expect((error?.underlyingError as? StoreError)?.code == .readOnly, "\(String(describing: error))")
        reader.performAndWait { #expect(reader.insertedObjects.count == 1, "the context keeps its changes") }
        try container.close()

        try disk.setReadOnly(false)
        container = try GraphModel.container(at: url)
        try Self.save("Margaret", notes: "", in: container.newBackgroundContext())
        try container.close()
        container = try GraphModel.container(at: url)
        #expect(try Self.employees(in: container) == expected.merging(["Margaret": 0]) { old, _ in old })
        try container.close()
        #expect(try Store.verify(at: url).isClean)
    }

    /// Runs `strata-graph-probe` with `arguments` and no backtrace on a crash; returns how it
    /// ended and its standard output's lines.
    static func runProbe(_ arguments: [String]) throws -> (ChildExit, [String]) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "strata-graph-probe")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let end: ChildExit =
            process.terminationReason == .exit
            ? .exited(process.terminationStatus) : .signalled(process.terminationStatus)
        return (end, String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// The names a probe's `saved <name>` lines acknowledge.
    static func acknowledged(_ lines: [String]) -> [String] {
        lines.filter { $0.hasPrefix("saved ") }.map { String($0.dropFirst(6)) }
    }

    /// With every file descriptor in use (a child process lowers its own `RLIMIT_NOFILE` and takes
    /// the rest, so that the tests running beside it keep theirs), saves and fetches go on (they
    /// open no file), compaction and closing, which must create files, fail with the engine's
    /// `io` and `EMFILE`, no crash; with the descriptors back, compaction goes through; reopened,
    /// the store holds every acknowledged save and verifies.
    @Test(.enabled(if: ResourceLimitTests.isLinux, "the probe's limits are Linux's"))
    func withNoFileDescriptorLeftSavesGoOnAndFailuresAreTyped() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let (end, lines) = try Self.runProbe([url.path, "exhaust-files", "3", "\(64 << 10)"])
        #expect(end == .exited(0), "\(end): \(lines)")
        let saved = Self.acknowledged(lines)
        #expect(saved == ["x0", "x1", "x2", "x3", "x4"], "\(lines)")
        #expect(lines.contains("fetched 3") && lines.contains("updated"), "\(lines)")
        let compaction = lines.first { $0.hasPrefix("compact-error") } ?? "none in \(lines)"
        #expect(compaction.hasPrefix("compact-error StoreError io errno \(EMFILE)"), "\(compaction)")
        #expect(lines.contains("compacted 1"), "with descriptors back, compaction goes through: \(lines)")
        let closing = lines.last ?? ""
        #expect(closing.hasPrefix("close-error StoreError io errno \(EMFILE)"), "\(closing)")

        let container = try GraphModel.container(at: url)
        #expect(try Set(Self.employees(in: container).keys) == Set(saved))
        #expect(try Self.count(in: container) == saved.count, "nothing is there twice")
        try container.close()
        #expect(try Store.verify(at: url).isClean)
    }

    /// Under an address-space limit a little above what the child uses once the store is open
    /// (`RLIMIT_AS`, lowered by the child itself), saves and fetches of 1 MiB objects run out of
    /// memory (here, with 8 MiB to spare, the second save; with 16 MiB, after six or seven saves,
    /// a fetch decoding a row's string in `RowCodec`). Swift traps when an allocation fails, and the engine's large
    /// buffers (rows, blocks, records, the block cache) are Swift arrays and strings, not
    /// `mmap`s that could fail with an error, so running out ends the process (`SIGABRT`,
    /// "failed to allocate") rather than throwing: the crash is accepted. What is checked is the
    /// aftermath: every save acknowledged before it is in the reopened store, at most the one
    /// in flight besides, nothing twice, and the store verifies.
    @Test(
        .enabled(if: ResourceLimitTests.isLinux, "RLIMIT_AS is enforced on Linux"),
        arguments: [8, 16])
    func runningOutOfMemoryLosesNoAcknowledgedSave(headroomMiB: Int) throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let (end, lines) = try Self.runProbe(
            [url.path, "fill", "8", "\(1 << 20)", "\(headroomMiB)"])
        let saved = Self.acknowledged(lines)
        #expect(lines.contains { $0.hasPrefix("limited") }, "\(end): \(lines)")
        if end == .exited(0) { #expect(saved.count == 8 || lines.contains { $0.contains("-error") }) }

        let container = try GraphModel.container(at: url)
        let names = try Set(Self.employees(in: container).keys)
        #expect(names.isSuperset(of: saved), "\(end): every acknowledged save is there")
        #expect(names.count <= saved.count + 1, "\(end): at most the save in flight besides")
        #expect(try Self.count(in: container) == names.count, "nothing is there twice")
        try container.close()
        #expect(try Store.verify(at: url).isClean)
    }

    static var isLinux: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// A test's assumption did not hold.
    struct Unexpected: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
