import Foundation
import FuzzDriver
import Logging
@testable import Strata

// Feeds damaged model files to the loaders a user calls: Xcode's model `contents` XML, an Xcode
// mapping model's `xcmapping.xml` (its expressions and user info are Base64 keyed archives), a
// compiled mapping model (`.cdm`, a binary property list keyed archive) and a versioned model's
// `.xccurrentversion` property list. What loads is used a little: its entities, properties,
// inverses, indexes, version hashes and fetch request templates, a mapping inferred between it
// and the test models, a mapping model's expressions printed. Every failure must be a
// `ModelError` (or, for the inference, a `CoreDataError`); any other error, crash, trap, hang or
// large allocation is a finding. (Leaks are not: FoundationXML loses a string for every XML error.)
//
// Input: one byte choosing the file (its value modulo 4: 0 a model's `contents`, 1 an
// `xcmapping.xml`, 2 a `.cdm`, 3 an `.xccurrentversion`), then the file's bytes. The seeds
// start with an ASCII digit, so `0<?xml …` is a model file.

/// What an input's first byte selects.
enum FileKind: UInt8 {
    case modelContents = 0
    case mappingXML = 1
    case compiledMapping = 2
    case currentVersion = 3
}

/// Where the inputs are written: a folder eight levels below the fuzzer's scratch directory,
/// holding a copy of the test models under `App/`, so that a mapping model's search for the
/// models it records (up to eight folders up) stays inside the scratch directory unless the
/// recorded path climbs out with `..`.
enum Scratch {
    /// The fuzzer's own directory, in memory when `/dev/shm` exists.
    static let root: URL = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return URL(fileURLWithPath: base).appendingPathComponent("strata-model-fuzz-\(getpid())")
    }()

    /// The folder the inputs are written to, with the test models in `App/`.
    static let work: URL = {
        let work = root.appendingPathComponent("a/b/c/d/e/f/g/work")
        try? FileManager.default.removeItem(at: root)
        let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/StrataTests/Models").standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: models, to: work.appendingPathComponent("App"))
        } catch {
            fatalError("cannot lay out the scratch directory \(root.path) from \(models.path): \(error)")
        }
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return work
    }()

    /// The test models loaded once, to infer mappings to and from: every model of `App/`.
    static let references: [ManagedObjectModel] = {
        let app = work.appendingPathComponent("App")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: app.path)) ?? []
        return names.sorted().compactMap { name -> ManagedObjectModel? in
            do {
                return try ManagedObjectModel(checkedContentsOf: app.appendingPathComponent(name))
            } catch {
                fatalError("the test model \(name) does not load: \(error)")
            }
        }
    }()
}

/// Stops the fuzzer with `message`: libFuzzer keeps the input.
func finding(_ message: String) -> Never {
    fatalError("model-file fuzzer finding: \(message)")
}

/// Runs `body`; a `ModelError` (or, when `allowsCoreDataError`, the `CoreDataError`
/// `inferredMappingModel` that inference documents) is `nil`, anything else a finding.
func attempt<T>(_ what: String, allowsCoreDataError: Bool = false, _ body: () throws -> T) -> T? {
    do {
        return try body()
    } catch let error as ModelError {
        if error.message.isEmpty { finding("\(what) failed with a ModelError without a message: \(error)") }
        return nil
    } catch let error as CoreDataError where allowsCoreDataError && error.code == .inferredMappingModel {
        _ = error.description
        return nil
    } catch {
        finding("\(what) threw \(type(of: error)), not a ModelError: \(error)")
    }
}

/// Reads what a loaded model holds, as an application and a store would.
func use(_ model: ManagedObjectModel) {
    _ = model.description
    _ = model.versionChecksum
    _ = model.entityVersionHashesByName
    _ = model.configurations.map { model.entities(forConfigurationName: $0) }
    for entity in model.entities {
        _ = entity.versionHash
        _ = entity.superentity?.name
        _ = entity.subentitiesByName
        _ = entity.indexes.map { $0.elements.map(\.propertyName) }
        _ = entity.uniquenessConstraints
        for property in entity.properties {
            _ = property.versionHash
            _ = property.description
            if let relationship = property as? RelationshipDescription {
                _ = relationship.destinationEntity?.versionHash
                _ = relationship.inverseRelationship?.inverseRelationship?.name
                _ = relationship.isToMany
            } else if let attribute = property as? AttributeDescription {
                _ = attribute.defaultValue.map { "\($0)" }
                _ = attribute.attributeValueClassName
            }
        }
    }
    for (_, request) in model.fetchRequestTemplatesByName {
        _ = request.predicate?.predicateFormat
        _ = request.entityName
    }
    for reference in Scratch.references.prefix(1) {
        _ = attempt("inferring a mapping", allowsCoreDataError: true) {
            try MappingModel.inferredMappingModel(forSourceModel: reference, destinationModel: model)
        }
        _ = attempt("inferring a mapping", allowsCoreDataError: true) {
            try MappingModel.inferredMappingModel(forSourceModel: model, destinationModel: reference)
        }
    }
}

/// Reads what a loaded mapping model holds, as a migration would.
func use(_ mapping: MappingModel) {
    _ = mapping.entityMappingsByName
    for entity in mapping.entityMappings {
        _ = entity.sourceExpression?.expressionFormat
        _ = entity.userInfo.map { "\($0)" }
        _ = (entity.mappingType, entity.sourceEntityVersionHash, entity.destinationEntityVersionHash)
        for property in (entity.attributeMappings ?? []) + (entity.relationshipMappings ?? []) {
            _ = property.valueExpression?.expressionFormat
            _ = property.userInfo.map { "\($0)" }
        }
    }
}

/// Writes `bytes` to `file` (creating its folder).
func write(_ bytes: Data, to file: URL) {
    do {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try bytes.write(to: file)
    } catch {
        fatalError("cannot write \(file.path): \(error)")
    }
}

/// Loads the model at `url` and uses it.
func loadModel(at url: URL) {
    if let model = attempt("loading a model", { try ManagedObjectModel(checkedContentsOf: url) }) { use(model) }
}

/// Loads the mapping model at `url` and uses it.
func loadMapping(at url: URL) {
    if let mapping = attempt("loading a mapping model", { try MappingModel(checkedContentsOf: url) }) { use(mapping) }
}

/// Whether the logging system was set up: once, before the first input.
let quietLogs: Void = {
    // The loaders log what they accept but doubt at warning level: not findings, and slow.
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0, let kind = FileKind(rawValue: data[0] % 4) else { return 0 }
    _ = quietLogs
    let body = Data(UnsafeBufferPointer(start: data + 1, count: count - 1))
    let work = Scratch.work
    _ = Scratch.references
    let folder: URL
    switch kind {
    case .modelContents:
        folder = work.appendingPathComponent("Fuzz.xcdatamodel")
        write(body, to: folder.appendingPathComponent("contents"))
        loadModel(at: folder)
    case .mappingXML:
        folder = work.appendingPathComponent("Fuzz.xcmappingmodel")
        write(body, to: folder.appendingPathComponent("xcmapping.xml"))
        loadMapping(at: folder)
    case .compiledMapping:
        folder = work.appendingPathComponent("Fuzz.cdm")
        write(body, to: folder)
        loadMapping(at: folder)
    case .currentVersion:
        folder = work.appendingPathComponent("Fuzz.xcdatamodeld")
        let versions = work.appendingPathComponent("App/Shop.xcdatamodeld")
        do {
            try FileManager.default.copyItem(at: versions, to: folder)
        } catch {
            fatalError("cannot copy \(versions.path): \(error)")
        }
        write(body, to: folder.appendingPathComponent(".xccurrentversion"))
        loadModel(at: folder)
    }
    try? FileManager.default.removeItem(at: folder)
    return 0
}

/// The executable's entry point, which SwiftPM links as `main` when the sanitizers are `-Xswiftc`
/// flags (as `make fuzz-model` passes them): it runs libFuzzer's driver on ``fuzz(_:_:)``.
@_cdecl("ModelFileFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
