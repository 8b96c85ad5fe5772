#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: the `errno` it set and what was being done. `Sendable`.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public var errno: Int32
    /// The call that failed, such as `pwrite`.
    public var operation: String

    /// Creates the error for `operation` failing with `errno`.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// The call and the system's text for the error.
    public var description: String { "\(operation): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The system calls the store makes on files: the seam in front of the operating system.
///
/// The store calls nothing else to touch its files, so tests can inject `EIO`, `ENOSPC` and
/// short writes by wrapping ``SystemFileIO``.
package protocol FileIO: Sendable {
    /// `open(2)`; returns the descriptor.
    func open(_ path: String, flags: Int32, mode: UInt32) throws -> Int32
    /// `close(2)`.
    func close(_ fd: Int32)
    /// `pread(2)`: reads up to `buffer.count` bytes at `offset`; returns how many were read.
    func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// `pwrite(2)`: writes up to `bytes.count` bytes at `offset`; returns how many were written.
    func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int
    /// `fsync(2)`.
    func fsync(_ fd: Int32) throws
    /// `fdatasync(2)` (`fsync` where the system has none).
    func fdatasync(_ fd: Int32) throws
    /// `ftruncate(2)`.
    func ftruncate(_ fd: Int32, to size: Int64) throws
    /// The file's size (`fstat(2)`).
    func size(_ fd: Int32) throws -> Int64
    /// `rename(2)`.
    func rename(_ from: String, to: String) throws
    /// `unlink(2)`.
    func unlink(_ path: String) throws
    /// `mkdir(2)`; an existing directory is not an error.
    func makeDirectory(_ path: String) throws
    /// The names in a directory, without `.` and `..`.
    func contentsOfDirectory(_ path: String) throws -> [String]
    /// `flock(2)` with `LOCK_EX | LOCK_NB`; returns `false` when another holder has it.
    func lockExclusively(_ fd: Int32) throws -> Bool
    /// `flock(2)` with `LOCK_UN`. Closing the descriptor is not enough: a child process forked
    /// meanwhile (by `posix_spawn`, until its `exec`) holds a copy that keeps the lock.
    func unlock(_ fd: Int32)
    /// Allocates disk space for `length` bytes at `offset` (`posix_fallocate(3)`), extending
    /// the file with zeros; where the system has no such call, extends it with `ftruncate`.
    func preallocate(_ fd: Int32, offset: Int64, length: Int64) throws
}

/// The real system calls.
package struct SystemFileIO: FileIO {
    /// Creates the system seam.
    package init() {}

    package func open(_ path: String, flags: Int32, mode: UInt32) throws -> Int32 {
        let fd = Self.retrying { () -> Int32 in
            #if canImport(Glibc)
            Glibc.open(path, flags | O_CLOEXEC, mode)
            #else
            Darwin.open(path, flags | O_CLOEXEC, mode_t(mode))
            #endif
        }
        guard fd >= 0 else { throw SystemCallError("open", errno: errno) }
        return fd
    }

    package func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    package func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = Self.retrying { () -> Int in
            #if canImport(Glibc)
            Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            #else
            Darwin.pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            #endif
        }
        guard count >= 0 else { throw SystemCallError("pread", errno: errno) }
        return count
    }

    package func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let count = Self.retrying { () -> Int in
            #if canImport(Glibc)
            Glibc.pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset))
            #else
            Darwin.pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset))
            #endif
        }
        guard count >= 0 else { throw SystemCallError("pwrite", errno: errno) }
        return count
    }

    package func fsync(_ fd: Int32) throws {
        #if canImport(Glibc)
        let result = Glibc.fsync(fd)
        #else
        let result = Darwin.fsync(fd)
        #endif
        guard result == 0 else { throw SystemCallError("fsync", errno: errno) }
    }

    package func fdatasync(_ fd: Int32) throws {
        #if canImport(Glibc)
        guard Glibc.fdatasync(fd) == 0 else { throw SystemCallError("fdatasync", errno: errno) }
        #else
        guard Darwin.fcntl(fd, F_FULLFSYNC) == 0 else { throw SystemCallError("fcntl(F_FULLFSYNC)", errno: errno) }
        #endif
    }

    package func ftruncate(_ fd: Int32, to size: Int64) throws {
        let result = Self.retrying { () -> Int32 in
            #if canImport(Glibc)
            Glibc.ftruncate(fd, off_t(size))
            #else
            Darwin.ftruncate(fd, off_t(size))
            #endif
        }
        guard result == 0 else { throw SystemCallError("ftruncate", errno: errno) }
    }

    package func size(_ fd: Int32) throws -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("fstat", errno: errno) }
        return Int64(info.st_size)
    }

    package func rename(_ from: String, to: String) throws {
        #if canImport(Glibc)
        let result = Glibc.rename(from, to)
        #else
        let result = Darwin.rename(from, to)
        #endif
        guard result == 0 else { throw SystemCallError("rename", errno: errno) }
    }

    package func unlink(_ path: String) throws {
        #if canImport(Glibc)
        let result = Glibc.unlink(path)
        #else
        let result = Darwin.unlink(path)
        #endif
        guard result == 0 else { throw SystemCallError("unlink", errno: errno) }
    }

    package func makeDirectory(_ path: String) throws {
        #if canImport(Glibc)
        let result = Glibc.mkdir(path, 0o755)
        #else
        let result = Darwin.mkdir(path, 0o755)
        #endif
        guard result == 0 || errno == EEXIST else { throw SystemCallError("mkdir", errno: errno) }
    }

    package func contentsOfDirectory(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else { throw SystemCallError("opendir", errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func lockExclusively(_ fd: Int32) throws -> Bool {
        let result = Self.retrying { () -> Int32 in flock(fd, LOCK_EX | LOCK_NB) }
        if result == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemCallError("flock", errno: errno)
    }

    package func unlock(_ fd: Int32) {
        _ = Self.retrying { () -> Int32 in flock(fd, LOCK_UN) }
    }

    package func preallocate(_ fd: Int32, offset: Int64, length: Int64) throws {
        #if canImport(Glibc)
        let result = posix_fallocate(fd, off_t(offset), off_t(length))
        guard result == 0 else { throw SystemCallError("posix_fallocate", errno: result) }
        #else
        if try size(fd) < offset + length { try ftruncate(fd, to: offset + length) }
        #endif
    }

    /// Repeats a call interrupted by a signal.
    private static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

extension FileIO {
    /// Writes `length` zero bytes at `offset`, 64 KiB at a time.
    func writeZeros(_ fd: Int32, at offset: Int64, length: Int64) throws {
        let chunk = [UInt8](repeating: 0, count: Int(min(length, 64 << 10)))
        try chunk.withUnsafeBytes { zeros in
            var done: Int64 = 0
            while done < length {
                let count = Int(min(Int64(zeros.count), length - done))
                try writeAll(fd, UnsafeRawBufferPointer(rebasing: zeros[..<count]), at: offset + done)
                done += Int64(count)
            }
        }
    }

    /// Writes all of `bytes` at `offset`, continuing after short writes.
    func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let written = try pwrite(fd, UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + Int64(done))
            guard written > 0 else { throw SystemCallError("pwrite", errno: EIO) }
            done += written
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`, continuing after short reads; returns how many
    /// were read (fewer only at the end of the file).
    func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let read = try pread(
                fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done))
            if read == 0 { break }
            done += read
        }
        return done
    }

    /// Syncs a directory so that names created or renamed in it are durable.
    func syncDirectory(_ path: String) throws {
        let fd = try open(path, flags: O_RDONLY | O_DIRECTORY, mode: 0)
        defer { close(fd) }
        try fsync(fd)
    }

    /// Writes `bytes` to `path` atomically: a temporary file, fsync, rename, fsync of the directory.
    func replaceAtomically(_ path: String, with bytes: [UInt8], directory: String) throws {
        try replaceAtomically(path, directory: directory) { fd in
            try bytes.withUnsafeBytes { raw in try writeAll(fd, raw, at: 0) }
        }
    }

    /// ``replaceAtomically(_:with:directory:)`` of the file that `write` writes to the
    /// descriptor it is given (a large file written in pieces, without one buffer of its bytes).
    /// What `write` throws is thrown after the temporary file is removed.
    func replaceAtomically(_ path: String, directory: String, writing write: (Int32) throws -> Void) throws {
        let temporary = path + ".tmp"
        let fd = try open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do {
            try write(fd)
            try fsync(fd)
        } catch {
            close(fd)
            try? unlink(temporary)
            throw error
        }
        close(fd)
        try rename(temporary, to: path)
        try syncDirectory(directory)
    }

    /// Reads a whole file.
    func readFile(_ path: String) throws -> [UInt8] {
        let fd = try open(path, flags: O_RDONLY, mode: 0)
        defer { close(fd) }
        let size = Int(try size(fd))
        var failure: (any Error)?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            do {
                initialized = try readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), at: 0)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
