import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc

/// The active segment's space past the log is allocated and written with zeros, so that a
/// durable commit overwrites space already written: its `fdatasync` then commits no new file
/// size and no extent turned from unwritten to written. The file holds the log, then zeros.
@Suite struct SegmentPreallocationTests {
    @Test func theSpacePastTheLogIsWrittenZerosThatCommitsOverwrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        for round in 0..<2 {
            let store = try Store.open(
                at: url, schema: TestSchema.schema, configuration: TestSchema.configuration(durability: .durable))
            for index in 0..<20 {
                var transaction = Transaction()
                let key = store.allocateKeys(for: TestSchema.employee, count: 1).lowerBound
                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(round * 100 + index))
                try store.commit(transaction)
            }
            let segment = try Self.activeSegment(of: url)
            let fd = Glibc.open(segment, O_RDONLY)
            try #require(fd >= 0, "open \(segment)")
            defer { Glibc.close(fd) }
            let size = Int64(lseek(fd, 0, SEEK_END))
            #expect(size >= Int64(Store.preallocationWindow), "round \(round): the window is allocated (\(size) bytes)")
            // Past the log, zeros: the last 64 KiB of the window.
            var tail = [UInt8](repeating: 1, count: 64 << 10)
            let read = tail.withUnsafeMutableBytes {
                Glibc.pread(fd, $0.baseAddress, $0.count, off_t(size - Int64($0.count)))
            }
            #expect(read == tail.count && tail.allSatisfy { $0 == 0 }, "round \(round): the window ends in zeros")
            if let unwritten = Self.unwrittenExtents(fd, length: size) {
                #expect(unwritten.isEmpty, "round \(round): extents left unwritten at \(unwritten)")
            }
            try store.close()
        }
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? store.close() }
        var count = 0
        try store.scan(TestSchema.employee) { _, _ in count += 1 }
        #expect(count == 40, "every commit of both rounds reads back")
    }

    /// The path of the newest segment file of the store at `url`.
    private static func activeSegment(of url: URL) throws -> String {
        let directory = url.path + "/segments"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".log") }.max())
        return directory + "/" + name
    }

    /// The logical offsets of the extents of the first `length` bytes of `fd` that the file
    /// system marks unwritten (`FIEMAP_EXTENT_UNWRITTEN`), or `nil` when it cannot tell
    /// (no `FS_IOC_FIEMAP`, as on tmpfs).
    private static func unwrittenExtents(_ fd: Int32, length: Int64) -> [UInt64]? {
        // struct fiemap (32 bytes) followed by up to 256 struct fiemap_extent (56 bytes each).
        let extentCount = 256
        var buffer = [UInt64](repeating: 0, count: (32 + 56 * extentCount) / 8)
        return buffer.withUnsafeMutableBytes { raw -> [UInt64]? in
            raw.storeBytes(of: 0, toByteOffset: 0, as: UInt64.self)  // fm_start
            raw.storeBytes(of: UInt64(length), toByteOffset: 8, as: UInt64.self)  // fm_length
            raw.storeBytes(of: 1, toByteOffset: 16, as: UInt32.self)  // fm_flags: FIEMAP_FLAG_SYNC
            raw.storeBytes(of: UInt32(extentCount), toByteOffset: 24, as: UInt32.self)  // fm_extent_count
            // `ioctl` is variadic, which Swift does not call: its symbol is called as a
            // three-argument C function instead.
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "ioctl") else { return nil }
            let ioctl = unsafeBitCast(
                symbol, to: (@convention(c) (Int32, UInt, UnsafeMutableRawPointer?) -> Int32).self)
            let fsIocFiemap: UInt = 0xC020_660B  // _IOWR('f', 11, struct fiemap)
            guard ioctl(fd, fsIocFiemap, raw.baseAddress) == 0 else { return nil }
            let mapped = Int(raw.load(fromByteOffset: 20, as: UInt32.self))
            return (0..<mapped).compactMap { index in
                let extent = 32 + 56 * index
                let flags = raw.load(fromByteOffset: extent + 40, as: UInt32.self)
                return flags & 0x800 != 0 ? raw.load(fromByteOffset: extent, as: UInt64.self) : nil  // FIEMAP_EXTENT_UNWRITTEN
            }
        }
    }
}
#endif
