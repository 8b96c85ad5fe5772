import Foundation
import Logging

private let logger = Logger(label: "strata.migration")

/// Migrates a store from one model to another through a mapping model (Core Data's
/// `NSMigrationManager`): reads the source store through a context of the source model and
/// writes a new destination store through a context of the destination model.
///
/// Objects are migrated in batches of ``batchSize``: each batch of destination objects is saved
/// and both contexts are reset, so memory holds one batch and the table of associations (two
/// object IDs an object). Validation runs once every relationship is set, as Core Data's third
/// stage. Destination objects get new object IDs. Progress is logged at debug level and kept in
/// ``migrationProgress``. Use one manager for one migration at a time, from one thread.
open class MigrationManager {
    /// The model of the source store.
    public let sourceModel: ManagedObjectModel
    /// The model of the destination store.
    public let destinationModel: ManagedObjectModel
    /// The mapping of the migration running or last run.
    public private(set) var mappingModel = MappingModel()
    /// The context reading the source store during a migration.
    public private(set) var sourceContext = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    /// The context writing the destination store during a migration.
    public private(set) var destinationContext = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    /// The entity mapping being migrated.
    public private(set) var currentEntityMapping: EntityMapping?
    /// How much of the migration is done, from 0 to 1.
    public private(set) var migrationProgress: Float = 0
    /// Anything the program keeps with the manager.
    public var userInfo: [AnyHashable: Any]?
    /// How many objects are migrated between two saves of the destination. The default is 10,000.
    public var batchSize = 10_000
    /// Whether the third stage validates the destination objects (`validateForUpdate()`), as
    /// Core Data's migration manager does with a mapping model; `false` for a lightweight
    /// migration, which Core Data does not validate (a migrated object fails validation only when
    /// it is saved again), where only a required attribute left without a value stops it.
    var validatesMigratedObjects = true

    private var cancellation: (any Error)?
    /// Destination objects created and not yet saved, with their mapping and source object.
    private var pending: [(mapping: String, source: ManagedObjectID, destination: ManagedObject)] = []
    /// The destination objects of each source object, by mapping name.
    private var destinationsBySource: [String: [ManagedObjectID: [ManagedObjectID]]] = [:]
    /// The destination objects of each mapping, in creation order.
    private var destinationsByMapping: [String: [ManagedObjectID]] = [:]
    /// The source object of each destination object.
    private var sourceByDestination: [ManagedObjectID: ManagedObjectID] = [:]
    private var stepsDone = 0
    private var stepCount = 1

    /// Creates a manager migrating stores of `sourceModel` to `destinationModel`.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
    }

    /// The source entity of a mapping.
    public func sourceEntity(for mapping: EntityMapping) -> EntityDescription? {
        mapping.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination entity of a mapping.
    public func destinationEntity(for mapping: EntityMapping) -> EntityDescription? {
        mapping.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
    }

    /// Records that `destination` was migrated from `source` by `mapping`.
    public func associate(
        sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
        for mapping: EntityMapping
    ) {
        pending.append((mapping.name, source.objectID, destination))
    }

    /// The destination objects the mapping named `mappingName` made of `sourceInstances` (of
    /// every source object when `nil`).
    public func destinationInstances(
        forEntityMappingName mappingName: String, sourceInstances: [ManagedObject]?
    ) -> [ManagedObject] {
        let saved = destinationsBySource[mappingName] ?? [:]
        guard let sourceInstances else {
            return (destinationsByMapping[mappingName] ?? []).map(destinationContext.object(with:))
                + pending.filter { $0.mapping == mappingName }.map(\.destination)
        }
        return sourceInstances.flatMap { source in
            (saved[source.objectID] ?? []).map(destinationContext.object(with:))
                + pending.filter { $0.mapping == mappingName && $0.source == source.objectID }.map(\.destination)
        }
    }

    /// The source objects the mapping named `mappingName` migrated to `destinationInstances`
    /// (every source object when `nil`).
    public func sourceInstances(
        forEntityMappingName mappingName: String, destinationInstances: [ManagedObject]?
    ) -> [ManagedObject] {
        guard let destinationInstances else {
            let ids = Set((destinationsByMapping[mappingName] ?? []).compactMap { sourceByDestination[$0] })
                .union(pending.filter { $0.mapping == mappingName }.map(\.source))
            return ids.map(sourceContext.object(with:))
        }
        return destinationInstances.compactMap { destination in
            if let id = sourceByDestination[destination.objectID], destinationsByMapping[mappingName] != nil {
                return sourceContext.object(with: id)
            }
            return pending.first { $0.mapping == mappingName && $0.destination === destination }.map {
                sourceContext.object(with: $0.source)
            }
        }
    }

    /// The destination objects migrated from `sources` by any mapping, in order.
    func destinationInstances(forSourceInstances sources: [ManagedObject]) -> [ManagedObject] {
        sources.flatMap { source in
            destinationsBySource.values.flatMap { $0[source.objectID] ?? [] }.map(destinationContext.object(with:))
        }
    }

    /// Whether the default policy sets `relationship`: not a to-many whose inverse to-one is
    /// mapped (setting the to-one sets it), nor a to-one whose inverse is a mapped ordered to-many
    /// (which keeps the order).
    func setsRelationship(_ relationship: RelationshipDescription) -> Bool {
        guard let inverse = relationship.inverseRelationship, let owner = inverse.entity else { return true }
        let inverseIsMapped = mappingModel.entityMappings.contains { mapping in
            guard let entity = destinationEntity(for: mapping), entity.isKindOf(entity: owner) else { return false }
            return mapping.relationshipMappingsByName[inverse.name]?.valueExpression != nil
        }
        guard inverseIsMapped else { return true }
        if relationship.isToMany { return relationship.isOrdered || inverse.isToMany }
        return !(inverse.isToMany && inverse.isOrdered)
    }

    /// Stops the migration running with `error`, which ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`` throws.
    public func cancelMigrationWithError(_ error: any Error) {
        cancellation = error
    }

    /// Migrates the store at `sourceURL` to a new store at `destinationURL` with `mapping` (Core
    /// Data's `migrateStore(from:type:options:mapping:to:type:options:)`): as
    /// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``.
    ///
    /// - Throws: what that method throws.
    public func migrateStore(
        from sourceURL: URL, type sourceType: PersistentStore.StoreType,
        options sourceOptions: [AnyHashable: Any]? = nil,
        mapping: MappingModel, to destinationURL: URL, type destinationType: PersistentStore.StoreType,
        options destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        try migrateStore(
            from: sourceURL, sourceType: sourceType.rawValue, options: sourceOptions, with: mapping,
            toDestinationURL: destinationURL, destinationType: destinationType.rawValue,
            destinationOptions: destinationOptions)
    }

    /// Migrates the store at `sourceURL` to a new store at `destinationURL` (Core Data's
    /// `migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`).
    /// The source store is not changed.
    ///
    /// - Parameters:
    ///   - sourceURL: the store to read, written with ``sourceModel``.
    ///   - sourceType: its type (``SQLiteStoreType``).
    ///   - sourceOptions: options to add it with.
    ///   - mappings: the mapping; `nil` infers one.
    ///   - destinationURL: where to write the new store (created; it must not hold a store of another model).
    ///   - destinationType: its type.
    ///   - destinationOptions: options to add it with.
    /// - Throws: ``CoreDataError``: `migrationManagerSourceStore` or `migrationManagerDestinationStore`
    ///   when a store cannot be added, `inferredMappingModel` when no mapping can be inferred,
    ///   `entityMigrationPolicy` for a policy class that does not exist, validation errors of the
    ///   migrated objects, `migrationCancelled` or the error given to ``cancelMigrationWithError(_:)``.
    open func migrateStore(
        from sourceURL: URL, sourceType: String, options sourceOptions: [AnyHashable: Any]? = nil,
        with mappings: MappingModel?,
        toDestinationURL destinationURL: URL, destinationType: String, destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        let started = ContinuousClock.now
        mappingModel =
            try mappings
            ?? MappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        resetAssociations()
        let sourceCoordinator = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        let destinationCoordinator = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        var options = sourceOptions ?? [:]
        options[MigratePersistentStoresAutomaticallyOption] = false
        let source: PersistentStore
        do {
            source = try sourceCoordinator.addPersistentStore(
                ofType: sourceType, configurationName: nil, at: sourceURL, options: options)
        } catch {
            throw CoreDataError(
                .migrationManagerSourceStore, "cannot open the source store at \(sourceURL.path): \(error)")
        }
        defer { try? sourceCoordinator.remove(source) }
        let destination: PersistentStore
        do {
            destination = try destinationCoordinator.addPersistentStore(
                ofType: destinationType, configurationName: nil, at: destinationURL, options: destinationOptions)
        } catch {
            throw CoreDataError(
                .migrationManagerDestinationStore,
                "cannot create the destination store at \(destinationURL.path): \(error)")
        }
        var destinationOpen = true
        defer { if destinationOpen { try? destinationCoordinator.remove(destination) } }
        sourceContext = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        sourceContext.persistentStoreCoordinator = sourceCoordinator
        destinationContext = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        destinationContext.persistentStoreCoordinator = destinationCoordinator
        destinationContext.defersValidation = true
        logger.debug(
            "migrating store",
            metadata: [
                "source": "\(sourceURL.path)", "destination": "\(destinationURL.path)",
                "mappings": "\(mappingModel.entityMappings.count)",
            ])
        try sourceContext.performAndWait {
            try destinationContext.performAndWait { try runStages() }
        }
        destinationOpen = false
        try destinationCoordinator.remove(destination)
        logger.debug(
            "migrated store",
            metadata: [
                "source": "\(sourceURL.path)", "objects": "\(sourceByDestination.count)",
                "duration": "\(ContinuousClock.now - started)",
            ])
    }

    /// Forgets the associations of a previous migration.
    private func resetAssociations() {
        pending = []
        destinationsBySource = [:]
        destinationsByMapping = [:]
        sourceByDestination = [:]
        cancellation = nil
        migrationProgress = 0
    }

    /// Creates the objects, then the relationships, then validates (Core Data's three stages).
    private func runStages() throws {
        let mappings = mappingModel.entityMappings.filter {
            $0.mappingType != .removeEntityMappingType && $0.mappingType != .addEntityMappingType
        }
        var sources: [String: [ManagedObjectID]] = [:]
        for mapping in mappings {
            guard let entity = sourceEntity(for: mapping) else { continue }
            sources[mapping.name] = try sourceObjectIDs(of: mapping, entity: entity)
        }
        let objectCount = sources.values.reduce(0) { $0 + $1.count }
        stepCount = max(1, objectCount * 3)
        stepsDone = 0
        // Each mapping's policy, in the order of `mappings`.
        var policies: [EntityMigrationPolicy] = []
        for mapping in mappings {
            let policy = try Self.policy(for: mapping)
            policies.append(policy)
            currentEntityMapping = mapping
            try policy.begin(mapping, with: self)
            try forEachBatch(of: sources[mapping.name] ?? [], stage: "create", mapping: mapping) { id in
                try policy.createDestinationInstances(
                    forSource: try sourceContext.existingObject(with: id), in: mapping, manager: self)
            }
            try policy.endInstanceCreation(forMapping: mapping, manager: self)
        }
        for (mapping, policy) in zip(mappings, policies) {
            currentEntityMapping = mapping
            try forEachBatch(of: destinationsByMapping[mapping.name] ?? [], stage: "relate", mapping: mapping) { id in
                try policy.createRelationships(
                    forDestination: destinationContext.object(with: id), in: mapping, manager: self)
            }
            try policy.endRelationshipCreation(forMapping: mapping, manager: self)
        }
        for (mapping, policy) in zip(mappings, policies) {
            currentEntityMapping = mapping
            var errors: [CoreDataError] = []
            try forEachBatch(of: destinationsByMapping[mapping.name] ?? [], stage: "validate", mapping: mapping) { id in
                do {
                    let object = destinationContext.object(with: id)
                    if validatesMigratedObjects {
                        try object.validateForUpdate()
                    } else {
                        try Self.checkRequiredAttributes(of: object)
                    }
                } catch let error as CoreDataError where error.code == .validationMultipleErrors {
                    errors += error.detailedErrors
                } catch let error as CoreDataError {
                    errors.append(error)
                }
            }
            try CoreDataError.throwing(errors)
            try policy.performCustomValidation(forMapping: mapping, manager: self)
            try policy.end(mapping, manager: self)
        }
        currentEntityMapping = nil
        migrationProgress = 1
    }

    /// The IDs of the source objects `mapping` migrates: those its source expression gives, or
    /// every object of `entity` (not of its subentities, which have mappings of their own).
    ///
    /// - Throws: ``CoreDataError`` `migration` when the source expression gives no objects;
    ///   the fetch's error.
    private func sourceObjectIDs(of mapping: EntityMapping, entity: EntityDescription) throws -> [ManagedObjectID] {
        guard let expression = mapping.sourceExpression else {
            let request = FetchRequest<ManagedObjectID>(entityName: entity.entityName)
            request.resultType = .managedObjectIDResultType
            request.includesSubentities = false
            return try sourceContext.fetch(request)
        }
        let value = try PredicateEvaluation(valueForKey: FetchPredicate.value(of:forKey:), substitutionVariables: nil)
            .value(expression, object: nil, bindings: ["manager": self, "entityMapping": mapping])
        guard let objects = value.flatMap(FetchValue.elements(of:)) else {
            throw CoreDataError(
                .migration, "the source expression of the mapping \(mapping.name) gives no objects: \(expression.expressionFormat)")
        }
        return objects.compactMap { ($0 as? ManagedObject)?.objectID ?? $0 as? ManagedObjectID }
    }

    /// Throws when a required attribute of `object` has no value: what a lightweight migration
    /// cannot leave behind (Core Data's "missing attribute values on mandatory destination
    /// attribute").
    ///
    /// - Throws: ``CoreDataError`` `validationMissingMandatoryProperty` naming the object and key.
    private static func checkRequiredAttributes(of object: ManagedObject) throws {
        for attribute in object.entity.attributesByName.values where !attribute.isOptional && !attribute.isTransient {
            guard object.value(forKey: attribute.name) == nil else { continue }
            throw CoreDataError(
                .validationMissingMandatoryProperty,
                "\(object.entity.entityName).\(attribute.name) is required and has no default value, and the migrated object \(object.objectID) has no value for it",
                key: attribute.name)
        }
    }

    /// Runs `body` for each of `ids`, saving the destination and resetting both contexts after
    /// every ``batchSize`` objects and at the end.
    private func forEachBatch(
        of ids: [ManagedObjectID], stage: String, mapping: EntityMapping, _ body: (ManagedObjectID) throws -> Void
    ) throws {
        var start = 0
        repeat {
            let end = min(start + max(1, batchSize), ids.count)
            for id in ids[start..<end] {
                if let cancellation { throw cancellation }
                try body(id)
            }
            try flush()
            stepsDone += end - start
            migrationProgress = Float(stepsDone) / Float(stepCount)
            logger.debug(
                "migration progress",
                metadata: [
                    "stage": "\(stage)", "mapping": "\(mapping.name)", "objects": "\(end)/\(ids.count)",
                    "progress": "\(Int(migrationProgress * 100))%",
                ])
            start = end
        } while start < ids.count
    }

    /// Saves the destination, records the associations made since with their permanent IDs, and
    /// resets both contexts.
    private func flush() throws {
        try destinationContext.save()
        for (mapping, source, destination) in pending {
            destinationsBySource[mapping, default: [:]][source, default: []].append(destination.objectID)
            destinationsByMapping[mapping, default: []].append(destination.objectID)
            sourceByDestination[destination.objectID] = source
        }
        pending = []
        destinationContext.reset()
        sourceContext.reset()
    }

    /// A new policy of the class a mapping names.
    private static func policy(for mapping: EntityMapping) throws -> EntityMigrationPolicy {
        guard var name = mapping.entityMigrationPolicyClassName, !name.isEmpty, name != "EntityMigrationPolicy" else {
            return EntityMigrationPolicy()
        }
        // Xcode's mapping editor writes the module as a build setting that mapc substitutes.
        if name.hasPrefix("$(PRODUCT_MODULE_NAME).") { name.removeFirst("$(PRODUCT_MODULE_NAME).".count) }
        var found = NSClassFromString(name) as? EntityMigrationPolicy.Type
        if found == nil, !name.contains(".") {
            found = SwiftTypeRecords.types(named: name, kind: .class, topLevel: true)
                .lazy.compactMap { $0 as? EntityMigrationPolicy.Type }.first
        }
        guard let type = found else {
            throw CoreDataError(
                .entityMigrationPolicy,
                "the mapping \(mapping.name) names the migration policy \(name), which is no EntityMigrationPolicy subclass"
            )
        }
        return type.init()
    }
}
