import Foundation
import Logging

extension ManagedObjectModel {
    /// Loads a model that Xcode's data model editor wrote.
    ///
    /// `url` may name:
    /// - a versioned model bundle, `Name.xcdatamodeld`: the version its `.xccurrentversion`
    ///   property list names (`_XCCurrentVersionName`) is loaded; without that file, the only
    ///   `.xcdatamodel` inside, or the last by name (`Name 10` after `Name 2`);
    /// - a model, `Name.xcdatamodel` (or any directory holding a `contents` file): its
    ///   `contents` file is loaded;
    /// - a `contents` XML file itself.
    ///
    /// Entities keep the order of the file. Default values, minimums and maximums are converted
    /// to the attribute's type (see ``AttributeDescription``). Parent entities, sub-entities,
    /// destinations and inverses are linked. Xcode's legacy `indexed="YES"` on an attribute
    /// becomes a one-element fetch index named `<attribute>Index`, and each legacy
    /// `<compoundIndex>` a fetch index named `compoundIndex<N>`. Fetched properties become
    /// ``FetchedPropertyDescription``s, derived attributes ``DerivedAttributeDescription``s,
    /// composite attributes ``CompositeAttributeDescription``s, and the model's `<fetchRequest>`
    /// elements its fetch request templates. The diagram's `elements` are skipped.
    ///
    /// Reads the file and at most one property list; costs one parse of the XML.
    ///
    /// This is ``init(contentsOf:)``'s throwing form: use it to learn why a model does not load.
    ///
    /// - Parameter url: a file URL of the model.
    /// - Throws: ``ModelError``: ``ModelError/Code/fileNotFound`` when the file (or the version
    ///   `.xccurrentversion` names) does not exist, ``ModelError/Code/unreadableFile``,
    ///   ``ModelError/Code/malformedXML`` with the line, ``ModelError/Code/unknownAttributeType``,
    ///   ``ModelError/Code/missingEntity`` and ``ModelError/Code/missingProperty`` for a
    ///   destination, inverse, parent or indexed property that does not exist,
    ///   ``ModelError/Code/inheritanceCycle``, ``ModelError/Code/duplicateName``,
    ///   ``ModelError/Code/invalidValue`` and ``ModelError/Code/invalidModel``. Each message names
    ///   the entity and property concerned and the line.
    public convenience init(checkedContentsOf url: URL) throws {
        self.init()
        let contents = try Self.contentsFile(of: url)
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw ModelError(
                .unreadableFile, "cannot read the model file \(contents.path): \(error.localizedDescription)",
                path: contents.path, cause: error)
        }
        let root = try ModelXMLDocument.parse(data, path: contents.path)
        try ModelFileReader(path: contents.path).read(root, into: self)
        if url.pathExtension == "xcdatamodeld" { versionBundleURL = url }
    }

    /// Loads a model that Xcode's data model editor wrote, as ``init(checkedContentsOf:)`` does;
    /// `nil` when it cannot be loaded, as Core Data's `NSManagedObjectModel(contentsOf:)`, with
    /// the reason logged at error level (`strata.model`).
    ///
    /// - Parameter url: a file URL of the model (`.xcdatamodeld`, `.xcdatamodel` or `contents`).
    public convenience init?(contentsOf url: URL) {
        do {
            try self.init(checkedContentsOf: url)
        } catch {
            modelLogger.error("cannot load the model at \(url.path): \(error)")
            return nil
        }
    }

    /// The `contents` file a model URL stands for.
    ///
    /// - Throws: ``ModelError`` when it does not exist or is not a regular file (a device, a
    ///   pipe), or the `.xccurrentversion` is unreadable, malformed or names a versioned model.
    static func contentsFile(of url: URL) throws -> URL {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.fileNotFound, "no model at \(url.path)", path: url.path)
        }
        guard isDirectory.boolValue else {
            // A device or a pipe (a path such as `/dev/zero` recorded in a mapping model) would
            // be read without end.
            let target = url.resolvingSymlinksInPath().path
            let type = try? fileManager.attributesOfItem(atPath: target)[.type] as? FileAttributeType
            guard type == .typeRegular else {
                throw ModelError(.unreadableFile, "the model \(url.path) is not a regular file", path: url.path)
            }
            return url
        }
        if url.pathExtension == "xcdatamodeld" {
            let version = try currentVersion(in: url)
            // A version that is itself a versioned model (`../Name.xcdatamodeld`) would be looked
            // into without end.
            guard version.pathExtension != "xcdatamodeld" else {
                throw ModelError(
                    .invalidModel,
                    "the current version of \(url.path) is \(version.lastPathComponent), a versioned model, not a version",
                    path: version.path)
            }
            return try contentsFile(of: version)
        }
        let contents = url.appendingPathComponent("contents")
        guard fileManager.fileExists(atPath: contents.path) else {
            if fileManager.fileExists(atPath: url.appendingPathComponent("elements").path) {
                // Xcode 3 kept the model in a binary archive of its own editor's classes, which
                // only Xcode reads; Xcode converts it to `contents` when it opens the model.
                throw ModelError(
                    .unreadableFile,
                    "the model \(url.path) is in Xcode 3's format (an elements archive, no contents file): open and save it in a current Xcode to convert it",
                    path: url.appendingPathComponent("elements").path)
            }
            throw ModelError(.fileNotFound, "the model \(url.path) has no contents file", path: contents.path)
        }
        return contents
    }

    /// The current version of a versioned model bundle.
    private static func currentVersion(in bundle: URL) throws -> URL {
        let fileManager = FileManager.default
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if fileManager.fileExists(atPath: marker.path) {
            let data: Data
            do {
                data = try Data(contentsOf: marker)
            } catch {
                throw ModelError(
                    .unreadableFile, "cannot read \(marker.path): \(error.localizedDescription)",
                    path: marker.path, cause: error)
            }
            // An empty dictionary (Xcode writes one when no version was chosen) names no
            // version: the bundle's last version is the current one, as without the file.
            guard let name = try currentVersionName(data, marker: marker), !name.isEmpty else {
                let version = try lastVersion(in: bundle)
                modelLogger.warning(
                    "\(marker.path) names no current version (_XCCurrentVersionName): loading \(version.lastPathComponent)"
                )
                return version
            }
            let version = bundle.appendingPathComponent(name)
            guard fileManager.fileExists(atPath: version.path) else {
                throw ModelError(
                    .fileNotFound, "the current version \(name) named by \(marker.path) does not exist",
                    path: version.path)
            }
            return version
        }
        return try lastVersion(in: bundle)
    }

    /// The `_XCCurrentVersionName` of a `.xccurrentversion` property list, `nil` when it has none.
    ///
    /// Xcode writes the file as an XML property list, which Foundation reads; a binary one is
    /// read by ``PropertyListReading``, which throws on a damaged file where Foundation's binary
    /// reader on Linux crashes (found by the model-file fuzzer).
    ///
    /// - Throws: ``ModelError`` `malformedXML` or `invalidValue` when `data` is not a property
    ///   list, `invalidModel` when it is not a dictionary.
    private static func currentVersionName(_ data: Data, marker: URL) throws -> String? {
        let plist: Any
        do {
            plist = try PropertyListReading.object(from: data, path: marker.path)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(
                .malformedXML, "\(marker.path) is not a property list: \(error.localizedDescription)",
                path: marker.path, cause: error)
        }
        guard let dictionary = plist as? [String: Any] else {
            throw ModelError(.invalidModel, "\(marker.path) is not a dictionary", path: marker.path)
        }
        return dictionary["_XCCurrentVersionName"] as? String
    }

    /// The last version of a versioned model bundle by name (``versions(in:)``).
    ///
    /// - Throws: ``ModelError`` `fileNotFound` when the bundle holds no `.xcdatamodel`.
    private static func lastVersion(in bundle: URL) throws -> URL {
        guard let last = try versions(in: bundle).last else {
            throw ModelError(
                .fileNotFound, "the versioned model \(bundle.path) holds no .xcdatamodel",
                path: bundle.path)
        }
        return last
    }

    /// The `.xcdatamodel` versions of a versioned model bundle, by name in numeric order
    /// (`Name`, `Name 2`, …, `Name 10`).
    ///
    /// - Throws: ``ModelError`` `unreadableFile` when the bundle cannot be listed.
    static func versions(in bundle: URL) throws -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path).filter {
                $0.hasSuffix(".xcdatamodel")
            }
        } catch {
            throw ModelError(
                .unreadableFile, "cannot list \(bundle.path): \(error.localizedDescription)",
                path: bundle.path, cause: error)
        }
        let sorted = names.sorted { lhs, rhs in
            let left = String(lhs.dropLast(".xcdatamodel".count))
            let right = String(rhs.dropLast(".xcdatamodel".count))
            return left.compare(right, options: .numeric) == .orderedAscending
        }
        return sorted.map { bundle.appendingPathComponent($0) }
    }
}
