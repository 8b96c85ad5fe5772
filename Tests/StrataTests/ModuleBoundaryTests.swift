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

    /// The paths, relative to `Sources/Strata`, of the module's Swift files that import `StrataStore`.
    static func engineImporters() throws -> [String] {
        let module = sources.appendingPathComponent("Strata").resolvingSymlinksInPath()
        let files = try #require(FileManager.default.enumerator(at: module, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 100, "the module's sources are at \(module.path)")
        var importers: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let imports = text.split(separator: "\n").contains {
                $0.contains(#/^\s*(@\w+(\([^)]*\))?\s+)*(\w+\s+)?import\s+(\w+\s+)?StrataStore\b/#)
            }
            if imports {
                importers.append(String(file.resolvingSymlinksInPath().path.dropFirst(module.path.count + 1)))
            }
        }
        return importers.sorted()
    }

    @Test("only the store layer imports the engine: nothing of Sources/Strata outside Store/ does")
    func onlyTheStoreLayerImportsTheEngine() throws {
        let importers = try Self.engineImporters()
        #expect(importers.contains { $0.hasPrefix("Store/") }, "the store layer's files import StrataStore")
        let outside = importers.filter { !$0.hasPrefix("Store/") }
        #expect(outside.isEmpty, "import the engine in Store/, not in \(outside.joined(separator: ", "))")
    }
}
