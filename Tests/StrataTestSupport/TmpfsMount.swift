import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small `tmpfs` mounted on a fresh temporary directory, for tests of a full disk and a
/// read-only file system: it can be grown, shrunk and made read-only or writable again while
/// mounted. Linux only, and only where the process may mount (root, outside a container that
/// forbids it): check ``isAvailable`` first. Unmount it in a `defer`; the directory is removed
/// after. Not `Sendable`: one test uses it.
package final class TmpfsMount {
    /// The mount point.
    package let url: URL
    private var mounted = false

    /// Whether this process can mount a `tmpfs`: on Linux as root, when a trial mount succeeds.
    package static let isAvailable: Bool = {
        #if os(Linux)
        guard geteuid() == 0 else { return false }
        guard let trial = try? TmpfsMount(size: 64 << 10) else { return false }
        trial.unmount()
        return true
        #else
        return false
        #endif
    }()

    /// Mounts a `tmpfs` of `size` bytes on a new directory under the system's temporary directory.
    ///
    /// - Throws: ``Failure`` when the directory cannot be made or `mount(2)` fails.
    package init(size: Int) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        do {
            try Self.mount(url.path, flags: 0, options: "size=\(size),mode=0755")
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        mounted = true
    }

    deinit { unmount() }

    /// The mount point's path.
    package var path: String { url.path }

    /// Changes the file system's size to `size` bytes; files already there stay.
    ///
    /// - Throws: ``Failure`` when `mount(2)` refuses (shrinking below what is used).
    package func resize(to size: Int) throws {
        try Self.mount(path, flags: remount, options: "size=\(size)")
    }

    /// Makes the file system read-only (`readOnly`) or writable again.
    ///
    /// - Throws: ``Failure`` when `mount(2)` refuses: `EBUSY` while a file is open for writing.
    package func setReadOnly(_ readOnly: Bool) throws {
        #if os(Linux)
        try Self.mount(path, flags: remount | (readOnly ? UInt(MS_RDONLY) : 0), options: "")
        #endif
    }

    /// Bytes free on the file system.
    package var freeBytes: Int64 {
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value ?? -1
    }

    /// Unmounts (lazily, should a file still be open) and removes the directory. Safe to call twice.
    package func unmount() {
        #if os(Linux)
        if mounted { _ = umount2(path, Int32(MNT_DETACH)) }
        #endif
        mounted = false
        try? FileManager.default.removeItem(at: url)
    }

    private var remount: UInt {
        #if os(Linux)
        UInt(MS_REMOUNT)
        #else
        0
        #endif
    }

    private static func mount(_ target: String, flags: UInt, options: String) throws {
        #if os(Linux)
        guard Glibc.mount("tmpfs", target, "tmpfs", flags, options) == 0 else {
            throw Failure(operation: "mount -t tmpfs -o \(options) \(target)", errno: errno)
        }
        #else
        throw Failure(operation: "mount -t tmpfs \(target)", errno: ENOTSUP)
        #endif
    }

    /// `mount(2)` failed.
    package struct Failure: Error, CustomStringConvertible {
        /// The mount attempted.
        package var operation: String
        /// Its `errno`.
        package var errno: Int32

        /// The mount and the system's text for the error.
        package var description: String { "\(operation): \(String(cString: strerror(errno)))" }
    }
}
