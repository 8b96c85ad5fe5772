import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The buffered writer a checkpoint is written with: what it writes does not depend on how
/// often it writes, and a checksummed run's checksum covers exactly its bytes.
@Suite struct BufferedFileWriterTests {
    /// Appended runs, a checksummed one among them and one past the flush size, a gap moved past
    /// and filled in afterwards: the file holds each at its place, and the run's checksum and
    /// length are those of its bytes, whatever the flush size.
    @Test(arguments: [1, 7, 64, 1 << 20])
    func writesEveryByteAtItsPlace(flushBytes: Int) throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/file"
        let io = SystemFileIO()
        let run = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let large = [UInt8](repeating: 0xAB, count: 200)
        var checksummed: (length: Int, checksum: UInt32) = (0, 0)
        var end: Int64 = 0
        try io.replaceAtomically(path, directory: folder.path) { fd in
            var file = BufferedFileWriter(io: io, fd: fd, at: 4, flushBytes: flushBytes)
            try file.beginChecksum()
            for byte in run {
                file.pending.u8(byte)
                try file.flushIfFull()
            }
            try file.append(large)
            checksummed = try file.endChecksum()
            try file.move(to: file.offset + 10)
            try file.append([1, 2, 3])
            try file.flush()
            end = file.offset
            try file.write([9, 9, 9, 9], at: 0)
            try file.write([UInt8](repeating: 5, count: 10), at: 4 + 500)
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let expected = [9, 9, 9, 9] + run + large + [UInt8](repeating: 5, count: 10) + [1, 2, 3]
        #expect(bytes == expected)
        #expect(end == Int64(expected.count))
        #expect(checksummed.length == 500)
        #expect(checksummed.checksum == CRC32C.checksum(run + large))
    }

    #if os(Linux)
    /// A write that fails (a full disk, here `/dev/full`) surfaces as the system call's error when
    /// the pending bytes reach the flush size, not later.
    @Test func aFailedWriteThrowsWhenTheBufferFills() throws {
        let io = SystemFileIO()
        let fd = try io.open("/dev/full", flags: O_WRONLY, mode: 0)
        defer { io.close(fd) }
        var file = BufferedFileWriter(io: io, fd: fd, at: 0, flushBytes: 16)
        file.pending.raw([UInt8](repeating: 1, count: 15))
        try file.flushIfFull()
        file.pending.u8(1)
        let error = #expect(throws: SystemCallError.self) { try file.flushIfFull() }
        #expect(error?.errno == ENOSPC)
    }
    #endif
}
