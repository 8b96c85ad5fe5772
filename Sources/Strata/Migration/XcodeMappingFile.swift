import Foundation

/// The objects of an Xcode mapping model (`Name.xcmappingmodel/xcmapping.xml`): a Core Data XML
/// store of Xcode's own editing objects. One `XDDEVMAPPINGMODEL` records the paths of the two
/// models it maps between; an `XDDEVENTITYMAPPING` for each entity mapping and an
/// `XDDEVATTRIBUTEMAPPING` or `XDDEVRELATIONSHIPMAPPING` for each property mapping carry their
/// names, and expressions and user info as Base64 keyed archives.
///
/// The file is read as the XML it is: its objects belong to a model of Xcode's.
struct XcodeMappingFile {
    /// One object of the file.
    struct Object {
        /// The object's type, upper-cased (`XDDEVENTITYMAPPING`).
        let type: String
        /// The text of each attribute, by lower-cased name.
        let attributes: [String: String]
        /// The identifiers each relationship refers to, by lower-cased name.
        let relationships: [String: [String]]

        /// The attribute `name` when it has non-blank text.
        func string(_ name: String) -> String? {
            guard let text = attributes[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
                return nil
            }
            return text
        }

        /// Whether the Boolean attribute `name` is set.
        func flag(_ name: String) -> Bool { ["1", "YES", "true"].contains(string(name) ?? "") }

        /// The bytes of the binary attribute `name` (Base64 text).
        func data(_ name: String) -> Data? {
            string(name).flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
        }
    }

    /// The mapping file read.
    let url: URL
    /// The `XDDEVMAPPINGMODEL` object.
    let root: Object
    /// Every object by its identifier.
    private let objects: [String: Object]

    /// Reads the file at `url`: an `.xcmappingmodel` directory or its `xcmapping.xml`.
    ///
    /// - Throws: ``ModelError`` `fileNotFound`, `unreadableFile`, `malformedXML`, or
    ///   `invalidModel` when the file holds no mapping model.
    init(contentsOf url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.fileNotFound, "no mapping model at \(url.path)", path: url.path)
        }
        let file = isDirectory.boolValue ? url.appendingPathComponent("xcmapping.xml") : url
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError(.unreadableFile, "cannot read \(file.path)", path: file.path, cause: error)
        }
        let database = try ModelXMLDocument.parse(data, path: file.path)
        var objects: [String: Object] = [:]
        for element in database.children(named: "object") {
            guard let id = element["id"], let type = element["type"] else { continue }
            var attributes: [String: String] = [:]
            for attribute in element.children(named: "attribute") {
                if let name = attribute["name"] { attributes[name.lowercased()] = attribute.text }
            }
            var relationships: [String: [String]] = [:]
            for relationship in element.children(named: "relationship") {
                guard let name = relationship["name"] else { continue }
                relationships[name.lowercased()] = (relationship["idrefs"] ?? "").split(separator: " ").map(String.init)
            }
            objects[id] = Object(type: type.uppercased(), attributes: attributes, relationships: relationships)
        }
        guard database.name == "database", let root = objects.values.first(where: { $0.type == "XDDEVMAPPINGMODEL" })
        else {
            throw ModelError(.invalidModel, "\(file.path) holds no Xcode mapping model", path: file.path)
        }
        self.url = url
        self.root = root
        self.objects = objects
    }

    /// The objects `object`'s relationship `name` refers to, in the file's order.
    func related(_ object: Object, _ name: String) -> [Object] {
        (object.relationships[name] ?? []).compactMap { objects[$0] }
    }

    /// The model whose path the mapping model records under `key` (`sourcemodelpath`,
    /// `destinationmodelpath`), as the project recorded it (`App/Model.xcdatamodeld/Model 2.xcdatamodel`):
    /// looked for by its trailing path components in the directories that hold the mapping
    /// model, nearest first, as a bundle or a project keeps both.
    ///
    /// - Throws: ``ModelError`` `fileNotFound` when no such model is found; what loading it throws.
    func model(recordedAt key: String) throws -> ManagedObjectModel {
        guard let recorded = root.string(key) else {
            throw ModelError(.invalidModel, "the mapping model records no \(key)", path: url.path)
        }
        let components = recorded.split(separator: "/").map(String.init)
        var directory = url.standardizedFileURL.deletingLastPathComponent()
        for _ in 0..<8 {
            for start in components.indices {
                let candidate = components[start...].reduce(directory) { $0.appendingPathComponent($1) }
                if FileManager.default.fileExists(atPath: candidate.path) {
                    return try ManagedObjectModel(checkedContentsOf: candidate)
                }
            }
            guard directory.path != "/" else { break }
            directory.deleteLastPathComponent()
        }
        throw ModelError(
            .fileNotFound, "the model \(recorded) the mapping model maps between is not beside it", path: url.path)
    }
}
