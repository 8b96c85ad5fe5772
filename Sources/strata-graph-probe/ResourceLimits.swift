import Foundation
import Strata
import StrataStore

#if canImport(Glibc)
import Glibc
#endif

/// `strata-graph-probe <store> exhaust-files <saves> <bytes>`: opens the store durable, then uses
/// up every file descriptor the process may open (the soft `RLIMIT_NOFILE` lowered to 256, the
/// free numbers below it taken by `/dev/null`) and, so exhausted, saves `saves` employees named
/// `x<n>` with `bytes` characters of notes, fetches, updates one and compacts; gives the
/// descriptors back and saves and compacts again; exhausts them again, saves once more and
/// closes. Prints a line per step: `saved <name>` after a save returned, `fetched <count>`,
/// `compacted <segments>`, `closed`, or `<step>-error <error>` (see ``describe(_:)``) when one
/// throws, so the test sees every acknowledged save and every error's type and code.
///
/// `strata-graph-probe <store> fill <saves> <bytes> [<headroom MiB>]`: opens the store durable,
/// lowers its own `RLIMIT_AS` to its address space plus `headroom` MiB when given, then saves
/// and fetches as above (`f<n>`) until done or an allocation fails, then closes.
///
/// Exits 0 when it got to its end, whatever the steps threw.
func resourceLimits(store url: URL, _ arguments: [String]) throws -> Never {
    guard arguments.count >= 3, let saves = Int(arguments[1]), let bytes = Int(arguments[2]) else {
        fail("usage: strata-graph-probe <store> exhaust-files|fill <saves> <bytes> [<headroom MiB>]")
    }
    let container = try openDurableContainer(at: url)
    report("opened")
    let prober = Prober(container: container, bytes: bytes)
    if arguments[0] == "exhaust-files" {
        var held = exhaustFileDescriptors()
        report("exhausted \(held.count)")
        for _ in 0..<saves { prober.save(prefix: "x") }
        prober.fetch()
        prober.update()
        prober.compact()
        for fd in held { close(fd) }
        report("returned")
        prober.save(prefix: "x")
        prober.compact()
        prober.fetch()
        held = exhaustFileDescriptors()
        report("exhausted \(held.count)")
        prober.save(prefix: "x")
    } else {
        if arguments.count == 4, let headroom = Int(arguments[3]) { limitAddressSpace(headroom: headroom << 20) }
        for _ in 0..<saves {
            prober.save(prefix: "f")
            prober.fetch()
        }
    }
    do {
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
        report("closed")
    } catch {
        report("close-error \(describe(error))")
    }
    exit(0)
}

/// Saves, fetches and compacts one container on one background context, reporting each step.
private final class Prober {
    let container: PersistentContainer
    let context: ManagedObjectContext
    let bytes: Int
    var number = 0
    var generator = SystemRandomNumberGenerator()

    init(container: PersistentContainer, bytes: Int) {
        self.container = container
        self.context = container.newBackgroundContext()
        self.bytes = bytes
    }

    /// Saves a new employee; on failure drops the unsaved insert.
    func save(prefix: String) {
        let name = "\(prefix)\(number)"
        number += 1
        // Base64 of random bytes, which LZ4 cannot shrink much.
        let words = (0..<(bytes * 3 / 32 + 1)).map { _ in generator.next() }
        let notes = words.withUnsafeBytes { Data($0.prefix(bytes * 3 / 4)) }.base64EncodedString()
        do {
            try context.performAndWait {
                let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue(name, forKey: "name")
                employee.setValue(notes, forKey: "notes")
                do {
                    try context.save()
                } catch {
                    context.rollback()
                    throw error
                }
            }
            report("saved \(name)")
        } catch {
            report("save-error \(describe(error))")
        }
    }

    /// Counts the employees and reads every one's notes.
    func fetch() {
        do {
            let count = try context.performAndWait {
                let employees = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee"))
                let characters = employees.reduce(0) { $0 + (($1.value(forKey: "notes") as? String)?.utf8.count ?? 0) }
                context.reset()
                return characters >= 0 ? employees.count : 0
            }
            report("fetched \(count)")
        } catch {
            report("fetch-error \(describe(error))")
        }
    }

    /// Changes the salary of the first employee, leaving a dead row for compaction.
    func update() {
        do {
            try context.performAndWait {
                let first = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee")).first
                first?.setValue(Int64(7), forKey: "salary")
                try context.save()
            }
            report("updated")
        } catch {
            context.performAndWait { context.rollback() }
            report("update-error \(describe(error))")
        }
    }

    /// Compacts the engine store.
    func compact() {
        do {
            let engine = container.persistentStoreCoordinator.persistentStores.first?.engineStore
            let compaction = try engine?.compact()
            report("compacted \(compaction?.segmentsCompacted ?? -1)")
        } catch {
            report("compact-error \(describe(error))")
        }
    }
}

/// `<type> <code> [<store error code>] errno <n>`, then the whole error: for a `CoreDataError`
/// its code's number and its underlying `StoreError`'s code, for a `StoreError` its code; the
/// `errno` of the system call behind it, 0 when none.
func describe(_ error: any Error) -> String {
    var store = error as? StoreError
    var head: String
    if let error = error as? CoreDataError {
        store = error.underlyingError as? StoreError
        head = "CoreDataError \(error.code.rawValue) \(store.map { "\($0.code)" } ?? "-")"
    } else if let store {
        head = "StoreError \(store.code)"
    } else {
        head = "\(type(of: error)) -"
    }
    var cause = store?.cause
    while let inner = cause as? StoreError { cause = inner.cause }
    head += " errno \((cause as? SystemCallError)?.errno ?? 0)"
    return "\(head) | \(error)"
}

/// Writes `line` to standard output at once.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Lowers the soft descriptor limit to 256 (when it is higher) and opens `/dev/null` until no
/// descriptor is left; returns the descriptors opened.
private func exhaustFileDescriptors() -> [Int32] {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur > 256 {
        limit.rlim_cur = 256
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    var held: [Int32] = []
    while true {
        let fd = open("/dev/null", O_RDONLY)
        guard fd >= 0 else { break }
        held.append(fd)
    }
    return held
}

/// Lowers the address-space limit to the process's current size plus `headroom` bytes.
private func limitAddressSpace(headroom: Int) {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmSize:") } ?? ""
    guard let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else {
        fail("no VmSize in /proc/self/status")
    }
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    limit.rlim_cur = rlim_t(kilobytes * 1024 + headroom)
    guard setrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0 else {
        fail("setrlimit(RLIMIT_AS): \(String(cString: strerror(errno)))")
    }
    report("limited \(kilobytes / 1024 + headroom >> 20) MiB")
}
