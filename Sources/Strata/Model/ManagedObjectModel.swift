import Foundation
import Logging
import StrataSynchronization
import Synchronization

/// A managed object model: the entities of an object graph, with their properties, inheritance,
/// indexes and constraints, and named configurations that group them (Core Data's
/// `NSManagedObjectModel`).
///
/// Build one in code (``init()``, then set ``entities``) or load an Xcode model with
/// ``init(contentsOf:)``. A model is edited freely until a persistent store coordinator uses it,
/// which freezes it: from then on setting any member of the model, its entities, properties or
/// indexes stops the process with "Can't modify an immutable model", as Core Data raises an
/// exception.
///
/// Equality and hashing are identity.
///
/// `Sendable`, with care: share a model between threads once it is frozen; before that, edit it
/// on one thread at a time.
// @unchecked Sendable: freezing is serialised by a mutex, computes every lookup table and then sets
// atomic frozen flags (release); every setter traps once the flag is set and readers check it with
// acquire ordering, so a frozen model and everything in it is immutable and safe to share. Unfrozen
// models are builders that callers confine to one thread.
public final class ManagedObjectModel: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The entities, in the order set (for a loaded model, the order of the file). Includes
    /// sub-entities: every entity of the model is listed.
    ///
    /// Setting it sets each entity's ``EntityDescription/managedObjectModel`` and drops entities no
    /// longer listed from the configurations.
    ///
    /// - Important: Setting an entity that belongs to another model stops the process, as does
    ///   setting it once the model is frozen.
    public var entities: [EntityDescription] {
        get { entityList }
        set {
            ensureMutable("entities")
            var unique: [EntityDescription] = []
            for entity in newValue where !unique.contains(where: { $0 === entity }) {
                if let owner = entity.managedObjectModel, owner !== self {
                    fatalError("Can't add entity \(entity.entityName) to a model: it belongs to another model")
                }
                unique.append(entity)
            }
            for old in entityList where !unique.contains(where: { $0 === old }) {
                old.managedObjectModel = nil
                for index in configurationList.indices {
                    configurationList[index].entities.removeAll { $0 === old }
                }
            }
            for entity in unique { entity.managedObjectModel = self }
            entityList = unique
        }
    }

    /// The entities, stored.
    private var entityList: [EntityDescription] = []

    /// The named configurations and their entities, in the order set.
    private var configurationList: [(name: String, entities: [EntityDescription])] = []

    /// The entities, by name.
    public var entitiesByName: [String: EntityDescription] {
        if frozen.isSet, let frozenEntitiesByName { return frozenEntitiesByName }
        return Dictionary(entityList.map { ($0.entityName, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// `entitiesByName`, computed once when the model is frozen.
    private var frozenEntitiesByName: [String: EntityDescription]?

    /// The names of the model's named configurations, in the order they were set. The default
    /// configuration, which holds every entity, is not listed.
    public var configurations: [String] { configurationList.map(\.name) }

    /// The name Core Data gives the configuration that holds every entity.
    static let defaultConfigurationName = "PF_DEFAULT_CONFIGURATION_NAME"

    /// The entities of a configuration.
    ///
    /// - Parameter configuration: a configuration name; `nil`, `"Default"` or
    ///   `"PF_DEFAULT_CONFIGURATION_NAME"` (unless a configuration of that name was set) name
    ///   the default configuration, which holds every entity.
    /// - Returns: the entities, or `nil` when the model has no configuration of that name.
    public func entities(forConfigurationName configuration: String?) -> [EntityDescription]? {
        guard let configuration else { return entityList }
        if let named = configurationList.first(where: { $0.name == configuration }) { return named.entities }
        if configuration == "Default" || configuration == Self.defaultConfigurationName { return entityList }
        return nil
    }

    /// Sets the entities of a named configuration, creating it if it does not exist.
    ///
    /// The entities should be entities of the model; ``validate()`` reports those that are not.
    ///
    /// - Parameters:
    ///   - entities: the configuration's entities.
    ///   - configuration: the configuration's name.
    /// - Important: Calling it once the model is frozen stops the process.
    public func setEntities(_ entities: [EntityDescription], forConfigurationName configuration: String) {
        ensureMutable("configurations")
        if let index = configurationList.firstIndex(where: { $0.name == configuration }) {
            configurationList[index].entities = entities
        } else {
            configurationList.append((configuration, entities))
        }
    }

    /// The ``EntityDescription/versionHash`` of every entity, by entity name (Core Data's).
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(entityList.map { ($0.entityName, $0.versionHash) }, uniquingKeysWith: { _, last in last })
    }

    /// Strata's layout hash of every entity, by entity name: two models whose dictionaries are
    /// equal store objects the same way.
    var entityLayoutHashesByName: [String: Data] {
        Dictionary(entityList.map { ($0.entityName, $0.layoutHash) }, uniquingKeysWith: { _, last in last })
    }

    /// Identifiers of the model's version, for the application's use (Xcode's "Model Version
    /// Identifier"). Strata does not read them; they do not change version hashes. The default
    /// is empty.
    public var versionIdentifiers: Set<AnyHashable> = [] {
        willSet { ensureMutable("versionIdentifiers") }
    }

    /// The `.xcdatamodeld` the model was loaded from, if any: a migration steps through its versions.
    var versionBundleURL: URL?

    /// The fetch request templates, by name (see ``fetchRequestTemplatesByName``).
    var fetchRequestTemplateTable: [String: FetchRequest<FetchRequestResult>] = [:]

    /// Set once the model is frozen.
    private let frozen = FreezeFlag()

    /// Serialises ``freeze()``.
    private let freezeLock = Lock(())

    /// The model checked and mapped to the engine's schema, once a coordinator has made it
    /// (``storeMapping()``).
    let storeMappingOnceFrozen = Lock<Result<StoreMapping, CoreDataError>?>(nil)

    /// Creates an empty model.
    public init() {}

    /// The number of entities and their names.
    public var description: String {
        "ManagedObjectModel(\(entityList.map(\.entityName).joined(separator: ", ")))"
    }

    /// Whether two models are the same object.
    public static func == (lhs: ManagedObjectModel, rhs: ManagedObjectModel) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Freezing

    /// Whether the model is frozen: used by a coordinator, no longer editable.
    var isFrozen: Bool { frozen.isSet }

    /// Makes the model and everything in it immutable, as a coordinator does when it first uses
    /// the model. Computes the lookup tables frozen entities answer from. Idempotent and safe to
    /// call from several threads at once.
    ///
    /// Sub- and superentities of listed entities are frozen too, even if not listed.
    func freeze() {
        freezeLock.withLock { _ in
            guard !frozen.isSet else { return }
            var all: [EntityDescription] = []
            var seen = Set<ObjectIdentifier>()
            var pending = entityList
            while let entity = pending.popLast() {
                guard seen.insert(ObjectIdentifier(entity)).inserted else { continue }
                all.append(entity)
                pending.append(contentsOf: entity.subentities)
                if let parent = entity.superentity { pending.append(parent) }
            }
            for entity in all { entity.prepareToFreeze() }
            frozenEntitiesByName = Dictionary(
                entityList.map { ($0.entityName, $0) }, uniquingKeysWith: { _, last in last })
            for entity in all { entity.markFrozen() }
            frozen.set()
            LoadedModels.add(self)
        }
    }

    /// Traps when the model is frozen.
    private func ensureMutable(_ member: String) {
        if frozen.isSet { immutableModelViolation("ManagedObjectModel.\(member)") }
    }

    // MARK: - Validation

    /// Checks that the model is consistent, as a coordinator needs it: entity names non-empty and
    /// unique; every superentity, sub-entity, destination and configuration member in the model;
    /// property names non-empty and unique across each inheritance chain; inverses that are
    /// relationships of the destination pointing back into the hierarchy; attribute types defined
    /// for persistent attributes; fetch index elements and uniqueness constraints naming
    /// properties of their entity.
    ///
    /// - Throws: ``ModelError`` naming the first problem found.
    func validate() throws {
        var names = Set<String>()
        let members = Set(entityList.map(ObjectIdentifier.init))
        func isMember(_ entity: EntityDescription) -> Bool { members.contains(ObjectIdentifier(entity)) }
        for entity in entityList {
            guard !entity.entityName.isEmpty else {
                throw ModelError(.invalidModel, "an entity of the model has no name")
            }
            guard names.insert(entity.entityName).inserted else {
                throw ModelError(
                    .duplicateName, "two entities are named \(entity.entityName)", entityName: entity.entityName)
            }
            if let parent = entity.superentity, !isMember(parent) {
                throw ModelError(
                    .missingEntity,
                    "entity \(entity.entityName) has superentity \(parent.entityName), which is not in the model",
                    entityName: entity.entityName)
            }
            for sub in entity.subentities where !isMember(sub) {
                throw ModelError(
                    .missingEntity,
                    "entity \(entity.entityName) has sub-entity \(sub.entityName), which is not in the model",
                    entityName: entity.entityName)
            }
            var propertyNames = Set<String>()
            for ancestor in entity.inheritanceChain {
                for property in ancestor.ownProperties {
                    guard !property.name.isEmpty else {
                        throw ModelError(
                            .invalidModel, "a property of entity \(ancestor.entityName) has no name",
                            entityName: ancestor.name)
                    }
                    guard propertyNames.insert(property.name).inserted else {
                        throw ModelError(
                            .duplicateName,
                            "entity \(entity.entityName) has two properties named \(property.name) (inherited ones included)",
                            entityName: entity.entityName, propertyName: property.name)
                    }
                }
            }
            for property in entity.ownProperties {
                try Self.validate(property, of: entity, isMember: isMember)
            }
            let all = entity.propertiesByName
            for index in entity.indexes {
                for element in index.elements {
                    guard let property = element.property, all[property.name] === property else {
                        throw ModelError(
                            .missingProperty,
                            "fetch index \(index.name) of entity \(entity.entityName) names \(element.propertyName ?? "no property"), which is not a property of \(entity.entityName)",
                            entityName: entity.entityName, propertyName: element.propertyName)
                    }
                }
            }
            for constraint in entity.uniquenessConstraints {
                for element in constraint {
                    let name = EntityDescription.constraintElementName(element)
                    guard all[name] != nil else {
                        throw ModelError(
                            .missingProperty,
                            "a uniqueness constraint of entity \(entity.entityName) names \(name), which is not a property of \(entity.entityName)",
                            entityName: entity.entityName, propertyName: name)
                    }
                }
            }
        }
        for configuration in configurationList {
            for entity in configuration.entities where !isMember(entity) {
                throw ModelError(
                    .missingEntity,
                    "configuration \(configuration.name) lists entity \(entity.entityName), which is not in the model",
                    entityName: entity.entityName)
            }
        }
    }

    /// Checks one property of `entity`.
    private static func validate(
        _ property: PropertyDescription,
        of entity: EntityDescription,
        isMember: (EntityDescription) -> Bool
    ) throws {
        if let attribute = property as? AttributeDescription {
            if attribute.attributeType == .undefinedAttributeType, !attribute.isTransient {
                throw ModelError(
                    .unknownAttributeType,
                    "attribute \(entity.entityName).\(attribute.name) has an undefined type but is not transient",
                    entityName: entity.entityName, propertyName: attribute.name)
            }
            if let derived = attribute as? DerivedAttributeDescription {
                try DerivationExpression.check(derived, of: entity)
            }
        } else if let relationship = property as? RelationshipDescription {
            guard let destination = relationship.destinationEntity else {
                throw ModelError(
                    .missingEntity, "relationship \(entity.entityName).\(relationship.name) has no destination entity",
                    entityName: entity.entityName, propertyName: relationship.name)
            }
            guard isMember(destination) else {
                throw ModelError(
                    .missingEntity,
                    "relationship \(entity.entityName).\(relationship.name) has destination \(destination.entityName), which is not in the model",
                    entityName: entity.entityName, propertyName: relationship.name)
            }
            if relationship.minCount < 0 || relationship.maxCount < 0
                || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount)
            {
                throw ModelError(
                    .invalidValue,
                    "relationship \(entity.entityName).\(relationship.name) has counts \(relationship.minCount)...\(relationship.maxCount)",
                    entityName: entity.entityName, propertyName: relationship.name)
            }
            if let inverse = relationship.inverseRelationship {
                guard destination.propertiesByName[inverse.name] === inverse else {
                    throw ModelError(
                        .missingProperty,
                        "relationship \(entity.entityName).\(relationship.name) has inverse \(inverse.qualifiedName), which is not a relationship of its destination \(destination.entityName)",
                        entityName: entity.entityName, propertyName: relationship.name)
                }
                guard let back = inverse.destinationEntity,
                    back.isKindOf(entity: entity) || entity.isKindOf(entity: back)
                else {
                    throw ModelError(
                        .invalidModel,
                        "relationship \(entity.entityName).\(relationship.name) has inverse \(inverse.qualifiedName), whose destination \(inverse.destinationEntity?.entityName ?? "(none)") is not \(entity.entityName) or related to it",
                        entityName: entity.entityName, propertyName: relationship.name)
                }
                if let other = inverse.inverseRelationship, other !== relationship {
                    // Accepted, as Core Data accepts it: each side maintains its own inverse.
                    modelLogger.warning(
                        "relationship \(entity.entityName).\(relationship.name) has inverse \(inverse.qualifiedName), whose own inverse is \(other.qualifiedName): the two sides disagree; each keeps its own"
                    )
                }
            }
        }
    }
}
