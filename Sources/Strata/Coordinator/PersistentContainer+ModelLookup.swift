import Foundation
import Logging

private let logger = Logger(label: "strata.container")

extension PersistentContainer {
    /// Creates a container named `name` for the model named `name`, looked up in the main
    /// bundle and in the package resource bundles next to the main executable (Core Data's
    /// `init(name:)`).
    ///
    /// The model is `name.xcdatamodeld`, `name.xcdatamodel`, `name.momd` or `name.mom`, at the
    /// top of a bundle's resources or in a folder there (SwiftPM's `.copy("Models")`). As in
    /// Core Data, a model that is missing or does not load is logged as an error and the
    /// container gets an empty model; use ``init(name:bundle:)`` to get the error instead.
    public convenience init(name: String) {
        let model: ManagedObjectModel
        do {
            model = try Self.loadModel(named: name, in: [Bundle.main] + Self.packageResourceBundles())
        } catch {
            logger.error("Failed to load model named \(name): \(error)")
            model = ManagedObjectModel()
        }
        self.init(name: name, managedObjectModel: model)
    }

    /// Creates a container named `name` for the model named `name` in `bundle`'s resources
    /// (pass `Bundle.module` for a package's own resources), looked up as ``init(name:)`` does.
    ///
    /// - Throws: ``ModelError`` ``ModelError/Code/fileNotFound`` when `bundle` has no such model,
    ///   or the error loading it.
    public convenience init(name: String, bundle: Bundle) throws {
        self.init(name: name, managedObjectModel: try Self.loadModel(named: name, in: [bundle]))
    }

    private static let modelExtensions = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]

    /// Loads the first model named `name` found in `bundles`.
    private static func loadModel(named name: String, in bundles: [Bundle]) throws -> ManagedObjectModel {
        for bundle in bundles {
            if let url = modelURL(named: name, in: bundle) {
                logger.debug("Loading model \(name) from \(url.path)")
                return try ManagedObjectModel(checkedContentsOf: url)
            }
        }
        throw ModelError(
            .fileNotFound,
            "no model named \(name) (\(modelExtensions.map { "\(name).\($0)" }.joined(separator: ", "))) in \(bundles.map(\.bundlePath).joined(separator: ", "))"
        )
    }

    /// The model named `name` at the top of `bundle`'s resources or in one of its folders.
    static func modelURL(named name: String, in bundle: Bundle) -> URL? {
        for ext in modelExtensions {
            if let url = bundle.url(forResource: name, withExtension: ext) { return url }
        }
        guard let resources = bundle.resourceURL,
            let folders = try? FileManager.default.contentsOfDirectory(
                at: resources, includingPropertiesForKeys: [.isDirectoryKey])
        else { return nil }
        for folder in folders.sorted(by: { $0.lastPathComponent < $1.lastPathComponent })
        where !modelExtensions.contains(folder.pathExtension)
            && (try? folder.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
        {
            for ext in modelExtensions {
                let url = folder.appendingPathComponent("\(name).\(ext)")
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// Every model at the top of `bundle`'s resources or in one of its folders, each version of a
    /// versioned model (`.xcdatamodeld`) on its own, in name order.
    static func modelURLs(in bundle: Bundle) -> [URL] {
        modelFileURLs(in: bundle).flatMap { url -> [URL] in
            url.pathExtension == "xcdatamodeld" ? (try? ManagedObjectModel.versions(in: url)) ?? [] : [url]
        }
    }

    /// Every model file at the top of `bundle`'s resources or in one of its folders, a versioned
    /// model as one, in name order.
    static func modelFileURLs(in bundle: Bundle) -> [URL] {
        resourceURLs(in: bundle, withExtensions: modelExtensions)
    }

    /// Every file or bundle directory with one of `extensions` at the top of `bundle`'s
    /// resources or in one of its folders (SwiftPM's `.copy("Models")`), in name order.
    static func resourceURLs(in bundle: Bundle, withExtensions extensions: [String]) -> [URL] {
        guard let resources = bundle.resourceURL else { return [] }
        func entries(_ folder: URL) -> [URL] {
            let found =
                (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.isDirectoryKey]))
                ?? []
            return found.sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
        let top = entries(resources)
        let nested = top.filter {
            !extensions.contains($0.pathExtension) && !modelExtensions.contains($0.pathExtension)
                && (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
        }
        return (top + nested.flatMap(entries)).filter { extensions.contains($0.pathExtension) }
    }

    /// The resource bundles SwiftPM places next to the main executable (`Package_Target.resources`
    /// on Linux, `Package_Target.bundle` on macOS).
    static func packageResourceBundles() -> [Bundle] {
        let directory = Bundle.main.executableURL?.deletingLastPathComponent() ?? Bundle.main.bundleURL
        let entries =
            (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return entries.filter { ["resources", "bundle"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .compactMap { Bundle(url: $0) }
    }
}
