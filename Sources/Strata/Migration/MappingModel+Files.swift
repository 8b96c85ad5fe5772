import Foundation
import Logging

private let logger = Logger(label: "strata.migration")

extension MappingModel {
    /// Reads a mapping model file, as Core Data's `NSMappingModel(contentsOf:)`; `nil` when it
    /// cannot be read, with the reason logged at error level.
    ///
    /// - Parameter url: an Xcode mapping model (`Name.xcmappingmodel` or its `xcmapping.xml`),
    ///   or a compiled one (`Name.cdm`); see ``init(checkedContentsOf:)``.
    public convenience init?(contentsOf url: URL?) {
        guard let url else { return nil }
        do {
            try self.init(checkedContentsOf: url)
        } catch {
            logger.error("cannot read the mapping model at \(url.path): \(error)")
            return nil
        }
    }

    /// Reads a mapping model file.
    ///
    /// An Xcode mapping model (`Name.xcmappingmodel`, as the project keeps it, or its
    /// `xcmapping.xml`) is compiled as Xcode compiles it: the two models it records are found by
    /// their paths' trailing components in the directories that hold it (put both in the same
    /// resources, as a project has them), each entity mapping's type follows from the two
    /// entities, and where the author wrote no expression an attribute gets the source's
    /// attribute of its name (`$source.name`), a relationship the destination objects of the
    /// source's relationship of its name
    /// (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`),
    /// and an entity mapping fetches its source entity's objects through its filter predicate.
    /// A compiled mapping model (`Name.cdm`, Xcode's `mapc` output) is read as it is.
    ///
    /// - Throws: ``ModelError``: `fileNotFound` for a missing file or recorded model,
    ///   `unreadableFile`, `malformedXML`, `invalidModel` when the file holds no mapping model,
    ///   `invalidValue` for an expression or user info archive that cannot be read, and what
    ///   loading a recorded model throws.
    public convenience init(checkedContentsOf url: URL) throws {
        if url.pathExtension == "cdm" {
            self.init(entityMappings: try Self.compiledEntityMappings(at: url))
        } else {
            let file = try XcodeMappingFile(contentsOf: url)
            self.init(
                entityMappings: try Self.entityMappings(
                    of: file, source: try file.model(recordedAt: "sourcemodelpath"),
                    destination: try file.model(recordedAt: "destinationmodelpath")))
        }
    }

    /// The mapping model in `bundles` from `sourceModel` to `destinationModel`, as Core Data's
    /// `NSMappingModel(from:forSourceModel:destinationModel:)`: the first mapping model (an
    /// Xcode `.xcmappingmodel` or a compiled `.cdm`) at the top of a bundle's resources or in
    /// one of its folders whose entity mappings' source and destination entity version hashes
    /// are among the two models' (Strata's version hashes are Core Data's). `nil` searches the
    /// main bundle and the package resource bundles next to the main executable. `nil` when none
    /// matches. A mapping model that does not read is skipped and logged at debug level.
    public convenience init?(
        from bundles: [Bundle]?, forSourceModel sourceModel: ManagedObjectModel?,
        destinationModel: ManagedObjectModel?
    ) {
        guard let sourceModel, let destinationModel,
            let found = Self.mappingModel(in: bundles, from: sourceModel, to: destinationModel)
        else { return nil }
        self.init(entityMappings: found.entityMappings)
    }

    /// The first Xcode mapping model in `bundles` (or the default bundles) from `source` to
    /// `destination`, as ``init(from:forSourceModel:destinationModel:)`` finds it.
    static func mappingModel(
        in bundles: [Bundle]?, from source: ManagedObjectModel, to destination: ManagedObjectModel
    ) -> MappingModel? {
        let searched = bundles ?? ([Bundle.main] + PersistentContainer.packageResourceBundles())
        let sourceHashes = Set(source.entityVersionHashesByName.values)
        let destinationHashes = Set(destination.entityVersionHashesByName.values)
        for url in searched.flatMap({
            PersistentContainer.resourceURLs(in: $0, withExtensions: ["xcmappingmodel", "cdm"])
        }) {
            let mapping: MappingModel
            do {
                mapping = try MappingModel(checkedContentsOf: url)
            } catch {
                logger.debug(
                    "skipping a mapping model that does not read",
                    metadata: ["path": "\(url.path)", "error": "\(error)"])
                continue
            }
            let mappingSources = Set(mapping.entityMappings.compactMap(\.sourceEntityVersionHash))
            let mappingDestinations = Set(mapping.entityMappings.compactMap(\.destinationEntityVersionHash))
            if !mappingSources.isEmpty, !mappingDestinations.isEmpty, mappingSources.isSubset(of: sourceHashes),
                mappingDestinations.isSubset(of: destinationHashes)
            {
                logger.debug("found a mapping model", metadata: ["path": "\(url.path)"])
                return mapping
            }
        }
        return nil
    }

    /// The entity mappings of an Xcode mapping model between `source` and `destination`, in the
    /// order the author numbered them.
    private static func entityMappings(
        of file: XcodeMappingFile, source: ManagedObjectModel, destination: ManagedObjectModel
    ) throws -> [EntityMapping] {
        let objects = file.related(file.root, "entitymappings").enumerated().sorted {
            (Int($0.element.string("mappingnumber") ?? "") ?? $0.offset)
                < (Int($1.element.string("mappingnumber") ?? "") ?? $1.offset)
        }.map(\.element)
        let names = objects.map { object in
            object.string("name")
                ?? [object.string("sourcename"), object.string("destinationname")].compactMap { $0 }.joined(
                    separator: "To")
        }
        // A relationship is filled through the mapping that carries its destination entity over.
        var mappingByDestination: [String: String] = [:]
        for (object, name) in zip(objects, names) {
            if let entity = object.string("destinationname"), mappingByDestination[entity] == nil {
                mappingByDestination[entity] = name
            }
        }
        return try zip(objects, names).map { object, name in
            let mapping = EntityMapping()
            mapping.name = name
            let from = object.string("sourcename").flatMap { source.entitiesByName[$0] }
            let to = object.string("destinationname").flatMap { destination.entitiesByName[$0] }
            mapping.sourceEntityName = object.string("sourcename")
            mapping.destinationEntityName = object.string("destinationname")
            mapping.sourceEntityVersionHash = from?.versionHash
            mapping.destinationEntityVersionHash = to?.versionHash
            mapping.mappingType = mappingType(named: object.string("mappingtypename"), from: from, to: to)
            mapping.entityMigrationPolicyClassName = object.string("migrationpolicyclassname")
            mapping.userInfo = try userInfo(object, in: file)
            if !object.flag("autogenerateexpression"), let data = object.data("sourceexpressiondata") {
                let archive = try KeyedArchive(data: data, path: file.url.path)
                mapping.sourceExpression = try archive.expression(archive.root)
            } else if let from {
                mapping.sourceExpression = defaultSourceExpression(
                    of: from.entityName, predicate: object.string("sourcefilterpredicatestring"))
            }
            mapping.attributeMappings = try file.related(object, "attributemappings").compactMap { property in
                try propertyMapping(property, in: file) { name in
                    from?.attributesByName[name] == nil ? nil : .keyPath(name, on: .variable("source"))
                }
            }
            mapping.relationshipMappings = try file.related(object, "relationshipmappings").compactMap { property in
                try propertyMapping(property, in: file) { name in
                    guard let relationship = from?.relationshipsByName[name],
                        let target = relationship.destinationEntity.flatMap({ mappingByDestination[$0.entityName] })
                    else { return nil }
                    return .method(
                        of: .variable("manager"),
                        selectorName: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                        arguments: [.constant(target), .keyPath(name, on: .variable("source"))])
                }
            }
            return mapping
        }
    }

    /// The mapping type the author chose in Xcode's mapping editor, or, for `Undefined`, the
    /// one the two entities give: added, removed, copied when their version hashes agree, else
    /// transformed.
    private static func mappingType(
        named name: String?, from: EntityDescription?, to: EntityDescription?
    ) -> EntityMappingType {
        switch name?.lowercased() {
        case "custom": return .customEntityMappingType
        case "add": return .addEntityMappingType
        case "remove": return .removeEntityMappingType
        case "copy": return .copyEntityMappingType
        case "transform": return .transformEntityMappingType
        default: break
        }
        guard let from else { return .addEntityMappingType }
        guard let to else { return .removeEntityMappingType }
        return from.versionHash == to.versionHash ? .copyEntityMappingType : .transformEntityMappingType
    }

    /// Core Data's source expression for a mapping that fetches `entity`'s objects meeting
    /// `predicate` (all when `nil`).
    static func defaultSourceExpression(of entity: String, predicate: String?) -> FetchExpression {
        .fetch(
            request: .method(
                of: .variable("manager"), selectorName: "fetchRequestForSourceEntityNamed:predicateString:",
                arguments: [.constant(entity), .constant(predicate ?? "TRUEPREDICATE")]),
            context: .keyPath("sourceContext", on: .variable("manager")), countOnly: false)
    }

    /// One property mapping of an Xcode mapping model: the expression the author wrote, or
    /// `generated(name)` when the expression is left to Xcode; `nil` for an unnamed one.
    private static func propertyMapping(
        _ object: XcodeMappingFile.Object, in file: XcodeMappingFile,
        generated: (String) -> FetchExpression?
    ) throws -> PropertyMapping? {
        guard let name = object.string("name") else { return nil }
        let mapping = PropertyMapping(name: name, valueExpression: nil)
        if !object.flag("autogenerateexpression"), let data = object.data("valueexpressiondata") {
            let archive = try KeyedArchive(data: data, path: file.url.path)
            mapping.valueExpression = try archive.expression(archive.root)
        } else {
            mapping.valueExpression = generated(name)
        }
        mapping.userInfo = try userInfo(object, in: file)
        return mapping
    }

    /// The user info dictionary archived in `object`'s `userinfodata`.
    private static func userInfo(
        _ object: XcodeMappingFile.Object, in file: XcodeMappingFile
    ) throws -> [AnyHashable: Any]? {
        guard let data = object.data("userinfodata") else { return nil }
        let archive = try KeyedArchive(data: data, path: file.url.path)
        return try archive.value(archive.root) as? [AnyHashable: Any]
    }

    /// The entity mappings of a compiled mapping model: a keyed archive of an `NSMappingModel`.
    private static func compiledEntityMappings(at url: URL) throws -> [EntityMapping] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelError(.unreadableFile, "cannot read \(url.path)", path: url.path, cause: error)
        }
        let archive = try KeyedArchive(data: data, path: url.path)
        guard let model = try archive.object(archive.root), model.className == "NSMappingModel" else {
            throw ModelError(.invalidModel, "\(url.path) holds no NSMappingModel", path: url.path)
        }
        func string(_ object: KeyedArchive.Object, _ key: String) throws -> String? {
            try object[key].flatMap { try archive.value($0) } as? String
        }
        func expression(_ object: KeyedArchive.Object, _ key: String) throws -> FetchExpression? {
            guard let field = object[key], try archive.object(field) != nil else { return nil }
            return try archive.expression(field)
        }
        func properties(_ reference: PropertyListValue?) throws -> [PropertyMapping] {
            try archive.references(reference).compactMap { reference in
                guard let object = try archive.object(reference) else { return nil }
                let mapping = PropertyMapping(
                    name: try string(object, "NSDestinationPropertyName") ?? "",
                    valueExpression: try expression(object, "NSValueExpression"))
                mapping.userInfo = try object["NSUserInfo"].flatMap { try archive.value($0) } as? [AnyHashable: Any]
                return mapping
            }
        }
        return try archive.references(model["NSEntityMappings"]).compactMap { reference in
            guard let object = try archive.object(reference) else { return nil }
            let mapping = EntityMapping()
            mapping.name = try string(object, "NSMappingName") ?? ""
            let type = try object["NSMappingType"].flatMap { try archive.value($0) } as? Int ?? 0
            mapping.mappingType =
                UInt(exactly: type).flatMap(EntityMappingType.init(rawValue:)) ?? .undefinedEntityMappingType
            mapping.sourceEntityName = try string(object, "NSSourceEntityName")
            mapping.destinationEntityName = try string(object, "NSDestinationEntityName")
            mapping.sourceEntityVersionHash =
                try object["NSSourceEntityVersionHash"].flatMap { try archive.value($0) } as? Data
            mapping.destinationEntityVersionHash =
                try object["NSDestinationEntityVersionHash"].flatMap { try archive.value($0) } as? Data
            mapping.sourceExpression = try expression(object, "NSSourceExpression")
            mapping.userInfo = try object["NSUserInfo"].flatMap { try archive.value($0) } as? [AnyHashable: Any]
            mapping.entityMigrationPolicyClassName = try string(object, "NSEntityMigrationPolicyClassName")
            mapping.attributeMappings = try properties(object["NSAttributeMappings"])
            mapping.relationshipMappings = try properties(object["NSRelationshipMappings"])
            return mapping
        }
    }
}
