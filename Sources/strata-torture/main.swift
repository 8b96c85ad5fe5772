// strata-torture: a helper process for the crash-recovery and lock tests.
//
//     strata-torture write PATH --seed N       commit forever, describing every commit on stdout
//     strata-torture open PATH [--read-only]   try to open; exit 0 (opened), 3 (locked) or 1
//     strata-torture check PATH                open and check every row's payload; exit 0 or 1
//
// `write` opens (creating) a durable store with ``TortureSchema`` and small segments and
// checkpoint interval, so that segment rolls, checkpoints and compaction happen within a few
// milliseconds, then commits until it is killed. Before each commit it prints a `begin` line,
// after the commit returns a `commit` line with the sequence number:
//
//     begin BATCH i=K,K,... u=K:VERSION,... d=K,...
//     commit BATCH SEQUENCE i=K,K,... u=K:VERSION,... d=K,...
//
// (`-` stands for an empty list). Every row carries the batch that inserted it, that batch's
// insert count, the batch that last wrote it and a version; its payload is a function of key and
// version (``TortureSchema/payload(key:version:)``), so a reader can check each row exactly. The
// test that kills this process keeps its own copy of the schema and row format.

import Foundation
import StrataStore
import StrataSynchronization
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The schema and row format the torture store uses.
enum TortureSchema {
    /// Columns of the single entity `Item`.
    static let batch = 0, batchSize = 1, lastBatch = 2, version = 3, payload = 4

    /// One entity, `Item`; `batch` has a fetch index.
    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Item",
            columns: [
                ColumnSchema(name: "batch", type: .int64, isNullable: false, isIndexed: true),
                ColumnSchema(name: "batchSize", type: .int64, isNullable: false),
                ColumnSchema(name: "lastBatch", type: .int64, isNullable: false),
                ColumnSchema(name: "version", type: .int64, isNullable: false),
                ColumnSchema(name: "payload", type: .string, isNullable: false),
            ])
    ])

    /// The row of `key` in the state `state`.
    static func row(key: Int64, _ state: ItemState) -> Row {
        Row([
            .int(state.batch), .int(state.batchSize), .int(state.lastBatch), .int(state.version),
            .string(payload(key: key, version: state.version)),
        ])
    }

    /// The payload of `key` at `version`: 40 to 400 hex digits, so that rows compress only partly.
    static func payload(key: Int64, version: Int64) -> String {
        var state = UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: version)
        var text = "\(key).\(version):"
        let words = 3 + Int(state % 23)
        for _ in 0..<words {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += String(state >> 1, radix: 16)
        }
        return text
    }
}

/// What the torture process knows of a row it may update or delete.
struct ItemState: Sendable {
    var batch: Int64
    var batchSize: Int64
    var lastBatch: Int64
    var version: Int64

    /// Reads the state back from a row, or `nil` when the row is not in the torture format.
    init?(_ row: Row) {
        guard row.count == 5, case .int(let batch) = row[0], case .int(let size) = row[1],
            case .int(let last) = row[2], case .int(let version) = row[3]
        else { return nil }
        self.init(batch: batch, batchSize: size, lastBatch: last, version: version)
    }

    init(batch: Int64, batchSize: Int64, lastBatch: Int64, version: Int64) {
        self.batch = batch
        self.batchSize = batchSize
        self.lastBatch = lastBatch
        self.version = version
    }
}

/// One commit: the keys it inserts, the keys it updates (with their new versions) and deletes.
struct Batch {
    var id: Int64
    var inserts: [Int64] = []
    var updates: [(key: Int64, version: Int64)] = []
    var deletes: [Int64] = []

    /// `i=... u=... d=...`.
    var description: String {
        func list(_ items: [String]) -> String { items.isEmpty ? "-" : items.joined(separator: ",") }
        return "i=\(list(inserts.map(String.init))) u=\(list(updates.map { "\($0.key):\($0.version)" })) "
            + "d=\(list(deletes.map(String.init)))"
    }
}

/// A small seeded generator (SplitMix64), so that runs with different seeds differ.
struct Generator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Process-wide state shared by the threads.
enum Shared {
    /// Held while a line is written, so that lines of different threads never mix.
    static let outputLock = Lock(())
    /// The next batch id; starts at `seed << 20`, so that ids of different runs differ.
    static let batchIDs = Atomic<Int64>(0)
}

/// Prints `line` to stdout with one `write(2)`, so it is out of the process once printed.
func emit(_ line: String) {
    Shared.outputLock.withLock { _ in
        let bytes = Array((line + "\n").utf8)
        var done = 0
        while done < bytes.count {
            let written = bytes[done...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { exit(4) }
            done += written
        }
    }
}

/// Prints `message` to stderr and exits with `code`.
func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(code)
}

/// The store configuration of a torture run: durable, background maintenance, small files.
func tortureConfiguration(readOnly: Bool = false) -> StoreConfiguration {
    var configuration = StoreConfiguration()
    configuration.durability = .durable
    configuration.backgroundMaintenance = true
    configuration.segmentSize = 128 << 10
    configuration.checkpointInterval = 64 << 10
    configuration.blockSize = 2 << 10
    configuration.readOnly = readOnly
    configuration.createIfMissing = !readOnly
    configuration.logger.logLevel = .warning
    return configuration
}

/// One committing thread, forever: each commit inserts 1 to 20 rows, and may update or delete
/// rows of `owned` (keys no other thread touches), deleting more once it owns `targetRows`.
/// Prints the `begin` line before the commit and the `commit` line after it returns.
func runWriter(store: Store, thread: Int, seed: UInt64, owned start: [Int64: ItemState], targetRows: Int) -> Never {
    var generator = Generator(seed: seed &* 7919 &+ UInt64(thread))
    var owned = start
    var keys = Array(owned.keys)
    while true {
        var batch = Batch(id: Shared.batchIDs.add(1, ordering: .relaxed).newValue)
        var transaction = Transaction(author: "torture", contextName: "thread \(thread)")
        var changes: [Int64: ItemState?] = [:]
        let insertCount = Int.random(in: 1...20, using: &generator)
        for key in store.allocateKeys(for: 0, count: insertCount) {
            let state = ItemState(batch: batch.id, batchSize: Int64(insertCount), lastBatch: batch.id, version: 0)
            transaction.insert(0, key: key, row: TortureSchema.row(key: key, state))
            batch.inserts.append(key)
            changes[key] = state
        }
        keys.shuffle(using: &generator)
        var next = 0
        let updateCount = Bool.random(using: &generator) ? Int.random(in: 1...3, using: &generator) : 0
        while batch.updates.count < updateCount, next < keys.count {
            let key = keys[next]
            next += 1
            var state = owned[key]!
            state.version += 1
            state.lastBatch = batch.id
            transaction.update(
                0, key: key, row: TortureSchema.row(key: key, state),
                changedColumns: [TortureSchema.lastBatch, TortureSchema.version, TortureSchema.payload])
            batch.updates.append((key, state.version))
            changes[key] = state
        }
        let deleteCount =
            owned.count > targetRows
            ? Int.random(in: insertCount...(insertCount + 4), using: &generator)
            : (Int.random(in: 0..<3, using: &generator) == 0 ? Int.random(in: 1...2, using: &generator) : 0)
        while batch.deletes.count < deleteCount, next < keys.count {
            let key = keys[next]
            next += 1
            transaction.delete(0, key: key)
            batch.deletes.append(key)
            changes[key] = .some(nil)
        }
        emit("begin \(batch.id) \(batch.description)")
        let sequence: UInt64
        do {
            sequence = try store.commit(transaction)
        } catch {
            fail("commit of batch \(batch.id) failed: \(error)", code: 2)
        }
        emit("commit \(batch.id) \(sequence) \(batch.description)")
        for (key, change) in changes {
            if let state = change { owned[key] = state } else { owned[key] = nil }
        }
        keys = Array(owned.keys)
    }
}

/// Moves the history floor and compacts now and then, while the writers commit.
func runMaintenance(store: Store, seed: UInt64) -> Never {
    var generator = Generator(seed: seed &+ 0xC0FFEE)
    while true {
        usleep(UInt32.random(in: 2_000...30_000, using: &generator))
        do {
            let last = store.lastSequence
            if last > 300 { try store.deleteHistory(before: last - 300) }
            if Int.random(in: 0..<4, using: &generator) == 0 { try store.compact() }
        } catch {
            fail("maintenance failed: \(error)", code: 2)
        }
    }
}

/// `write PATH --seed N`.
func writeCommand(path: String, seed: UInt64) -> Never {
    let store: Store
    do {
        store = try Store.open(
            at: URL(fileURLWithPath: path), schema: TortureSchema.schema, configuration: tortureConfiguration())
    } catch {
        fail("open failed: \(error)", code: 2)
    }
    let threads = [1, 2, 3, 4][Int(seed % 4)]
    var owned = [[Int64: ItemState]](repeating: [:], count: threads)
    do {
        try store.scan(0) { key, row in
            guard let state = ItemState(row) else { fail("row \(key) is not a torture row: \(row)", code: 2) }
            owned[Int(key % Int64(threads))][key] = state
        }
    } catch {
        fail("scan failed: \(error)", code: 2)
    }
    Shared.batchIDs.store(Int64(seed) << 20, ordering: .relaxed)
    for thread in 0..<threads {
        let start = owned[thread]
        Thread { runWriter(store: store, thread: thread, seed: seed, owned: start, targetRows: 1_500 / threads) }
            .start()
    }
    if seed % 3 != 0 {
        Thread { runMaintenance(store: store, seed: seed) }.start()
    }
    while true { sleep(60) }
}

/// `open PATH [--read-only]`: opens the store, prints what it holds, closes it.
func openCommand(path: String, readOnly: Bool) -> Never {
    do {
        let store = try Store.open(
            at: URL(fileURLWithPath: path), schema: nil, configuration: tortureConfiguration(readOnly: readOnly))
        emit("opened rows=\(store.count(0)) sequence=\(store.lastSequence)")
        try store.close()
        exit(0)
    } catch let error as StoreError where error.code == .locked {
        emit("locked \(error.path ?? "")")
        exit(3)
    } catch {
        emit("error \(error)")
        exit(1)
    }
}

/// `check PATH`: opens the store and checks that every row is a well-formed torture row.
func checkCommand(path: String) -> Never {
    do {
        var configuration = tortureConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(
            at: URL(fileURLWithPath: path), schema: TortureSchema.schema, configuration: configuration)
        var rows = 0
        try store.scan(0) { key, row in
            guard let state = ItemState(row), row == TortureSchema.row(key: key, state) else {
                fail("row \(key) is wrong: \(row)")
            }
            rows += 1
        }
        guard rows == store.count(0) else { fail("scan found \(rows) rows; the index counts \(store.count(0))") }
        try store.close()
        emit("ok rows=\(rows) sequence=\(store.lastSequence)")
        exit(0)
    } catch {
        fail("check failed: \(error)")
    }
}

let arguments = CommandLine.arguments
switch (arguments.count, arguments.count > 1 ? arguments[1] : "") {
case (5, "write") where arguments[3] == "--seed" && UInt64(arguments[4]) != nil:
    writeCommand(path: arguments[2], seed: UInt64(arguments[4])!)
case (3, "open"):
    openCommand(path: arguments[2], readOnly: false)
case (4, "open") where arguments[3] == "--read-only":
    openCommand(path: arguments[2], readOnly: true)
case (3, "check"):
    checkCommand(path: arguments[2])
default:
    fail("usage: strata-torture write PATH --seed N | open PATH [--read-only] | check PATH", code: 64)
}
