import Foundation

/// A fresh directory under the system's temporary directory, removed with its contents when the
/// value is released: one per test.
package final class TemporaryDirectory: Sendable {
    /// The directory's URL.
    package let url: URL

    /// Creates the directory.
    package init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The directory's path.
    package var path: String { url.path }

    /// The URL of a store directory named `name` (with the extension `strata`) inside the directory;
    /// the store is not created.
    package func store(_ name: String = "Company") -> URL { url.appendingPathComponent("\(name).strata") }

    /// Writes `text` to the file at `relativePath` inside the directory, creating the folders on its way.
    ///
    /// - Returns: The file's URL.
    /// - Throws: The file system's error when a folder or the file cannot be written.
    @discardableResult
    package func write(_ text: String, to relativePath: String) throws -> URL {
        let file = url.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }
}
