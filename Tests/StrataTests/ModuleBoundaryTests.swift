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

    /// The files of `Sources/Strata` outside `Store/` that still import the engine: what is left
    /// to move behind the store layer. The list may only shrink.
    static let engineImportersOutsideStore: Set<String> = []

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
                $0.contains(#/^\s*(@\w+\s+)*(\w+\s+)?import\s+(\w+\s+)?StrataStore\b/#)
            }
            if imports {
                importers.append(String(file.resolvingSymlinksInPath().path.dropFirst(module.path.count + 1)))
            }
        }
        return importers.sorted()
    }

    @Test("batch requests, history and migration reach the engine only through Store/")
    func requestsHistoryAndMigrationImportNoEngine() throws {
        let importers = try Self.engineImporters()
        let through = importers.filter {
            $0.hasPrefix("Requests/") || $0.hasPrefix("History/") || $0.hasPrefix("Migration/")
        }
        #expect(through.isEmpty, "these files import StrataStore: \(through.joined(separator: ", "))")
    }

    @Test("every file outside Store/ that imports the engine is one the list leaves for a later step")
    func engineImportersOutsideStoreAreListed() throws {
        let outside = Set(try Self.engineImporters().filter { !$0.hasPrefix("Store/") })
        let unlisted = outside.subtracting(Self.engineImportersOutsideStore).sorted()
        #expect(unlisted.isEmpty, "import the engine in Store/, not in \(unlisted.joined(separator: ", "))")
        let gone = Self.engineImportersOutsideStore.subtracting(outside).sorted()
        #expect(gone.isEmpty, "no longer import the engine; take them off the list: \(gone.joined(separator: ", "))")
    }
}
