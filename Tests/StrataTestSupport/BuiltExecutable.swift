import Foundation

/// The package's executables, which `swift build --build-tests` builds into the directory of the
/// test binary.
package enum BuiltExecutable {
    /// The executable product `name` built beside the running test binary.
    ///
    /// - Parameter name: The product's name, such as `strata`.
    /// - Returns: The executable's file URL.
    /// - Throws: ``Missing`` when no executable file of that name is there.
    package static func url(named name: String) throws -> URL {
        let candidates = directories.map { $0.appendingPathComponent(name) }
        guard let found = candidates.first(where: isExecutableFile) else {
            throw Missing(name: name, candidates: candidates)
        }
        return found
    }

    /// The directories that may hold the products: those of the test bundle and of the running
    /// binary, outside any `.xctest` bundle (on Darwin the binary sits in
    /// `StrataPackageTests.xctest/Contents/MacOS`).
    private static var directories: [URL] {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [Bundle.main.bundleURL, binary].map { directory in
            var directory = directory
            while directory.pathComponents.contains(where: { $0.hasSuffix(".xctest") }) {
                directory.deleteLastPathComponent()
            }
            return directory
        }
    }

    /// Whether `url` is an executable file (a directory's search permission does not count).
    private static func isExecutableFile(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: url.path)
    }

    /// An executable was not found beside the test binary.
    package struct Missing: Error, CustomStringConvertible {
        /// The product's name.
        package var name: String
        /// The paths looked at.
        package var candidates: [URL]

        /// Which executable is missing, where it was looked for and how to build it.
        package var description: String {
            "\(name) was not found next to the test binary (looked at \(candidates.map(\.path))); "
                + "build it with `swift build --build-tests`, which builds every product"
        }
    }
}
