import Foundation
import Testing

/// The package's sources keep the module boundaries `docs/architecture.md` describes.
@Suite struct ModuleBoundaryTests {
    /// The package's `Sources` folder, found from this file's path (`Tests/StrataTests/`).
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test("no module re-exports another: a file that names an engine type imports StrataStore itself")
    func noExportedImports() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 100, "the sources are at \(Self.sources.path)")
        var exported: [String] = []
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.contains(#/@_exported\s+(\w+\s+)?import\b/#) {
                exported.append("\(file.path):\(index + 1): \(line)")
            }
        }
        #expect(exported.isEmpty, "\(exported.joined(separator: "\n"))")
    }
}
