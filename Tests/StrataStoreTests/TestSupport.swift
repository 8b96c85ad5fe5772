import Dispatch
import Foundation
import StrataSynchronization
import Synchronization
@testable import StrataStore

/// The schema most tests use: Department and Employee, as in the reference workloads.
enum TestSchema {
    static let department = 0
    static let employee = 1

    static let schema = try! Schema(entities: [
        EntitySchema(
            id: 0, name: "Department",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, isIndexed: true),
                ColumnSchema(name: "budget", type: .double, isNullable: false),
            ]),
        EntitySchema(
            id: 1, name: "Employee",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, keepsTombstone: true),
                ColumnSchema(name: "salary", type: .int64, isNullable: false, isIndexed: true),
                ColumnSchema(name: "notes", type: .string),
                ColumnSchema(name: "department", type: .reference(entity: 0)),
            ]),
    ])

    static func employee(_ index: Int, department: Int64? = nil) -> Row {
        Row([
            .string("Employee \(index)"), .int(Int64(30_000 + index * 7 % 170_000)),
            .string("notes for employee \(index), compressible text compressible text"),
            department.map { .reference($0) } ?? .null,
        ])
    }

    static func configuration(durability: Durability = .relaxed) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = durability
        configuration.backgroundMaintenance = false
        return configuration
    }
}

/// The files of a (closed) store, for tests that measure or remove them.
enum StoreFiles {
    /// The total size of the segment files of the store at `url`.
    static func segmentFileBytes(_ url: URL) -> Int64 {
        let directory = url.path + "/segments"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".log") }.reduce(Int64(0)) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    /// Opens the checkpoint file at `path` of a (closed) store, its block table's pages checked
    /// against the sizes of the store's segment files (`path`'s directory's sibling `segments`).
    static func openCheckpoint(_ path: String) throws -> Checkpoint {
        let segments = URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path
            + "/segments/"
        return try Checkpoint.open(path: path, schema: TestSchema.schema, io: SystemFileIO()) { order in
            var sizes: [UInt32: Int64] = [:]
            for id in order {
                let attributes = try? FileManager.default.attributesOfItem(atPath: segments + SegmentFile.fileName(id))
                sizes[id] = (attributes?[.size] as? NSNumber)?.int64Value
            }
            return sizes
        }
    }

    /// Removes every checkpoint file of the (closed) store at `url`, so that the next open replays the whole log.
    static func deleteCheckpoints(_ url: URL) throws {
        let directory = url.path + "/checkpoints"
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }
}

/// Runs every body on its own thread and waits for all of them.
func runThreads(_ bodies: [@Sendable () -> Void]) {
    let done = DispatchSemaphore(value: 0)
    for body in bodies {
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
    }
    for _ in bodies { done.wait() }
}

/// A value shared between threads under a lock.
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Lock<Value>
    init(_ value: Value) { mutex = Lock(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
