import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A checkpoint is written front to back through a bounded buffer, its head last: the file does
/// not depend on the buffer's size.
@Suite struct CheckpointWriteTests {
    /// The store's checkpoint (two pages of an object index with deleted keys, a history of 300
    /// commits, fetch indexes), opened and written again through buffers of a few bytes, so that
    /// every section and page crosses flushes, is byte for byte the file the store wrote; the
    /// store opens from it and finds every row.
    @Test func aCheckpointWrittenThroughASmallBufferIsTheSameFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var department = Transaction(author: "writer")
        department.insert(
            TestSchema.department, key: store.allocateKeys(for: TestSchema.department).lowerBound,
            row: Row([.string("R&D"), .double(1e6)]))
        try store.commit(department)
        for _ in 0..<300 {
            var transaction = Transaction(author: "writer")
            for key in store.allocateKeys(for: TestSchema.employee, count: 20) {
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key), department: 1))
            }
            try store.commit(transaction)
        }
        var deletes = Transaction(author: "writer")
        for key in stride(from: Int64(1), through: 5_000, by: 3) { deletes.delete(TestSchema.employee, key: key) }
        try store.commit(deletes)
        try store.close()

        let manifest = try Manifest.decode(
            Array(try Data(contentsOf: url.appendingPathComponent("manifest"))), path: "manifest")
        let path = url.path + "/checkpoints/" + Checkpoint.fileName(try #require(manifest.checkpoint))
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        var checkpoint = try StoreFiles.openCheckpoint(path)
        checkpoint.state.fetchIndexes = try Checkpoint.readFetchIndexes(
            checkpoint.fetchIndexSections, schema: TestSchema.schema)
        #expect(checkpoint.state.entities[TestSchema.employee].pages.count == 2)
        #expect(checkpoint.state.history.count == 302)
        let io = SystemFileIO()
        for flushBytes in [1, 13, 4_096] {
            let copy = directory.path + "/copy-\(flushBytes).ckpt"
            var length: Int64 = 0
            try io.replaceAtomically(copy, directory: directory.path) { fd in
                length = try checkpoint.write(schema: TestSchema.schema, to: fd, io: io, flushBytes: flushBytes)
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
            #expect(bytes == written, "flushing every \(flushBytes) bytes")
            #expect(length == Int64(bytes.count))
        }

        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? reopened.close() }
        #expect(reopened.count(TestSchema.employee) == 6_000 - 1_667)
        #expect(try reopened.read(TestSchema.employee, key: 5_999) == TestSchema.employee(5_999, department: 1))
        #expect(try reopened.read(TestSchema.employee, key: 4) == nil)
    }
}
