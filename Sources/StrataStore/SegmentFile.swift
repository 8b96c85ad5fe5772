import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open segment file, shared by every reader that reads from it.
///
/// A segment that compaction replaced is marked obsolete; its file is deleted when the last
/// reference (a reader, a scan, the store) lets go, so no reader ever loses a file under it.
final class SegmentFile: Sendable {
    /// The size of the header that starts every segment:
    /// `"STRATSEG"`, `u32 formatVersion`, `u32 segmentID`, the store's 16-byte UUID.
    static let headerSize = 32
    private static let magic = Array("STRATSEG".utf8)

    /// The segment's id.
    let id: UInt32
    /// The file's path.
    let path: String
    /// The open descriptor.
    let fd: Int32
    private let io: any FileIO
    private let obsolete = Atomic<Bool>(false)

    private init(id: UInt32, path: String, fd: Int32, io: any FileIO) {
        self.id = id
        self.path = path
        self.fd = fd
        self.io = io
    }

    deinit {
        io.close(fd)
        if obsolete.load(ordering: .acquiring) { try? io.unlink(path) }
    }

    /// The file name of segment `id`.
    static func fileName(_ id: UInt32) -> String { numberedFileName(id, suffix: ".log") }

    /// The segment id a file name names, if it is a segment's.
    static func id(fromFileName name: String) -> UInt32? {
        guard name.hasSuffix(".log") else { return nil }
        return UInt32(name.dropLast(4))
    }

    /// Creates a new segment file with its header, synced, and syncs the directory.
    static func create(id: UInt32, directory: String, storeID: UUID, io: any FileIO) throws -> SegmentFile {
        let path = directory + "/" + fileName(id)
        let fd = try StoreError.io("create segment", path: path) {
            try io.open(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o644)
        }
        let segment = SegmentFile(id: id, path: path, fd: fd, io: io)
        var header = BinaryWriter(capacity: headerSize)
        header.raw(magic)
        header.u32(Store.formatVersion)
        header.u32(id)
        withUnsafeBytes(of: storeID.uuid) { header.raw($0) }
        do {
            try StoreError.io("write segment header", path: path) {
                try header.bytes.withUnsafeBytes { try io.writeAll(fd, $0, at: 0) }
                try io.fsync(fd)
                try io.syncDirectory(directory)
            }
        } catch {
            // No manifest names it yet: a file left behind would hold space on a full disk.
            segment.markObsolete()
            throw error
        }
        return segment
    }

    /// Opens an existing segment and checks its header.
    static func open(id: UInt32, directory: String, storeID: UUID, writable: Bool, io: any FileIO) throws -> SegmentFile
    {
        let path = directory + "/" + fileName(id)
        let fd = try StoreError.io("open segment", path: path) {
            try io.open(path, flags: writable ? O_RDWR : O_RDONLY, mode: 0)
        }
        let segment = SegmentFile(id: id, path: path, fd: fd, io: io)
        var header = [UInt8](repeating: 0, count: headerSize)
        let read = try StoreError.io("read segment header", path: path) {
            try header.withUnsafeMutableBytes { try io.readFully(fd, into: $0, at: 0) }
        }
        var expected = BinaryWriter(capacity: headerSize)
        expected.raw(magic)
        expected.u32(Store.formatVersion)
        expected.u32(id)
        withUnsafeBytes(of: storeID.uuid) { expected.raw($0) }
        guard read == headerSize, header == expected.bytes else {
            throw StoreError(.corrupt, "segment header does not belong to this store", path: path, offset: 0)
        }
        return segment
    }

    /// The file's current size.
    func size() throws -> Int64 {
        try StoreError.io("stat segment", path: path) { try io.size(fd) }
    }

    /// Reads `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        // Not zero-filled first: only the bytes read are kept.
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try StoreError.io("read segment", path: path) {
                try io.readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            }
        }
    }

    /// Marks the file for deletion once nothing references it.
    func markObsolete() {
        obsolete.store(true, ordering: .releasing)
    }
}

extension StoreError {
    /// Runs a file operation, translating a ``SystemCallError`` into a store error naming the path.
    static func io<T>(_ what: String, path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SystemCallError {
            let code: Code = error.errno == ENOSPC ? .diskFull : .io
            throw StoreError(code, "\(what) failed", path: path, cause: error)
        }
    }
}
