import Foundation

/// A kind of managed object: its name, its properties, its place in an inheritance hierarchy and
/// the indexes and constraints the store keeps for it (Core Data's `NSEntityDescription`).
///
/// A sub-entity inherits every property of its superentities: ``properties``,
/// ``propertiesByName``, ``attributesByName`` and ``relationshipsByName`` include them, the
/// superentities' first. Build a hierarchy by setting the superentity's ``subentities``; an
/// entity's ``superentity`` follows.
///
/// Entities are edited freely until their ``ManagedObjectModel`` is used by a persistent store
/// coordinator, which freezes it; setting any member after that stops the process with
/// "Can't modify an immutable model", as Core Data raises an exception.
///
/// Equality and hashing are identity.
///
/// `Sendable`, with care: share an entity between threads once its model is frozen; before that,
/// edit it on one thread at a time.
// @unchecked Sendable: every setter traps once the model is frozen, and the lookup tables read
// after that are computed before the atomic frozen flag is set (release) and read after it is
// seen (acquire), so a frozen entity is immutable and safe to share. Unfrozen entities are
// builders that callers confine to one thread.
public final class EntityDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The entity's name, unique within its model; `nil` until one is set, as Core Data's
    /// `NSEntityDescription.name` is. Setting `nil` makes the entity unnamed again.
    public var name: String? {
        get { entityName.isEmpty ? nil : entityName }
        set { entityName = newValue ?? "" }
    }

    /// The entity's name, the empty string for an unnamed entity: the non-optional spelling of
    /// ``name`` that lookups and messages use.
    package var entityName: String {
        willSet { ensureMutable("name") }
    }

    /// The name of the class that represents the entity's objects (Xcode's "Class"). The default
    /// is `"ManagedObject"`.
    public var managedObjectClassName: String {
        willSet { ensureMutable("managedObjectClassName") }
    }

    /// The model whose ``ManagedObjectModel/entities`` holds the entity; `nil` before it is
    /// added. Weak: the model owns its entities.
    public internal(set) weak var managedObjectModel: ManagedObjectModel?

    /// Whether the entity is abstract: it has no objects of its own, only objects of its
    /// sub-entities. The default is `false`.
    public var isAbstract: Bool = false {
        willSet { ensureMutable("isAbstract") }
    }

    /// The entity's own properties, without inherited ones, in the order they were set.
    private(set) var ownProperties: [PropertyDescription] = []

    /// The entity's properties (attributes, relationships and fetched properties): the
    /// inherited ones first (the root entity's first), then its own, each entity's in the order
    /// they were set.
    ///
    /// Setting it sets the entity's own properties and each one's ``PropertyDescription/entity``;
    /// inherited properties in the new value are skipped, so
    /// `entity.properties.append(attribute)` works on a sub-entity too.
    ///
    /// - Important: Setting a property that belongs to another entity, or two properties of one
    ///   name, stops the process (Core Data raises an exception), as does setting it once the
    ///   model is frozen.
    public var properties: [PropertyDescription] {
        get {
            if frozen.isSet, let lookup { return lookup.properties }
            return computeProperties()
        }
        set {
            ensureMutable("properties")
            var own: [PropertyDescription] = []
            var names = Set<String>()
            for property in newValue {
                if let owner = property.entity, owner !== self {
                    if isKindOf(entity: owner) { continue }
                    fatalError(
                        "Can't add property \(property.name) to entity \(entityName): it belongs to entity \(owner.entityName)"
                    )
                }
                guard !own.contains(where: { $0 === property }) else { continue }
                guard names.insert(property.name).inserted else {
                    fatalError(
                        "Can't add property \(property.name) to entity \(entityName): it already has a property of that name"
                    )
                }
                own.append(property)
            }
            for old in ownProperties where !own.contains(where: { $0 === old }) { old.entity = nil }
            for property in own { property.entity = self }
            ownProperties = own
        }
    }

    /// The entity's properties, inherited ones included, by name.
    public var propertiesByName: [String: PropertyDescription] {
        if frozen.isSet, let lookup { return lookup.propertiesByName }
        return Dictionary(computeProperties().map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The entity's attributes, inherited ones included, by name.
    public var attributesByName: [String: AttributeDescription] {
        if frozen.isSet, let lookup { return lookup.attributesByName }
        return Self.byName(computeProperties())
    }

    /// The entity's relationships, inherited ones included, by name.
    public var relationshipsByName: [String: RelationshipDescription] {
        if frozen.isSet, let lookup { return lookup.relationshipsByName }
        return Self.byName(computeProperties())
    }

    /// The entity's direct sub-entities.
    ///
    /// Setting it sets each sub-entity's ``superentity`` (removing it from a previous
    /// superentity's sub-entities) and clears the superentity of entities no longer listed.
    ///
    /// - Important: A list that would make an entity its own ancestor stops the process, as does
    ///   setting it once the model is frozen.
    public var subentities: [EntityDescription] {
        get { directSubentities }
        set {
            ensureMutable("subentities")
            var unique: [EntityDescription] = []
            for entity in newValue where !unique.contains(where: { $0 === entity }) {
                if isKindOf(entity: entity) {
                    fatalError(
                        "Can't make \(entity.entityName) a sub-entity of \(entityName): \(entity.entityName) is \(entityName) or one of its superentities"
                    )
                }
                unique.append(entity)
            }
            for old in directSubentities where !unique.contains(where: { $0 === old }) {
                old.ensureMutable("superentity")
                old.superentity = nil
            }
            for entity in unique {
                if let previous = entity.superentity, previous !== self {
                    previous.ensureMutable("subentities")
                    previous.directSubentities.removeAll { $0 === entity }
                }
                entity.ensureMutable("superentity")
                entity.superentity = self
            }
            directSubentities = unique
        }
    }

    /// The sub-entities, in the order set.
    private var directSubentities: [EntityDescription] = []

    /// The entity's direct sub-entities, by name.
    public var subentitiesByName: [String: EntityDescription] {
        Dictionary(directSubentities.map { ($0.entityName, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The entity this one inherits from, set through the superentity's ``subentities``.
    /// Weak (``AnchoredReference``): a superentity owns its sub-entities.
    public internal(set) var superentity: EntityDescription? {
        get { superentityReference.target }
        set { superentityReference = AnchoredReference(newValue?.anchor) }
    }
    /// The storage of ``superentity``.
    private var superentityReference = AnchoredReference<EntityDescription>(nil)

    /// Sets of properties whose values must be unique together among the entity's objects; each
    /// inner array holds property names (`String`) or ``PropertyDescription``s. The default is
    /// empty.
    public var uniquenessConstraints: [[Any]] = [] {
        willSet { ensureMutable("uniquenessConstraints") }
    }

    /// The fetch indexes the store keeps for the entity. Setting it sets each index's
    /// ``FetchIndexDescription/entity``. The default is empty.
    public var indexes: [FetchIndexDescription] = [] {
        willSet { ensureMutable("indexes") }
        didSet {
            for index in oldValue where index.entity === self { index.entity = nil }
            for index in indexes { index.entity = self }
        }
    }

    /// Application data about the entity (optional, as Core Data's). Strata does not read it.
    /// The default is empty.
    public var userInfo: [AnyHashable: Any]? = [:] {
        willSet { ensureMutable("userInfo") }
    }

    /// A string mixed into ``versionHash``, to mark a change the hash would not otherwise see.
    /// The default is `nil`.
    public var versionHashModifier: String? {
        willSet { ensureMutable("versionHashModifier") }
    }

    /// The name the entity had in an earlier model version, used by migration to match a renamed
    /// entity (Xcode's "Renaming ID"). The default is `nil`.
    public var renamingIdentifier: String? {
        willSet { ensureMutable("renamingIdentifier") }
    }

    /// Set when the model is frozen.
    let frozen = FreezeFlag()

    /// The lookup tables of a frozen entity, computed once by ``prepareToFreeze()``.
    private var lookup: Lookup?

    /// What the entity's properties, indexes and sub-entities, and relationships to it, refer to
    /// it through (``AnchoredReference``).
    let anchor = ReferenceAnchor<EntityDescription>()

    /// Creates an entity with no name and no properties.
    public init() {
        entityName = ""
        managedObjectClassName = "ManagedObject"
        anchor.target = self
    }

    deinit {
        anchor.target = nil
    }

    /// Creates an entity.
    ///
    /// - Parameters:
    ///   - name: the entity's name.
    ///   - properties: its own properties.
    public convenience init(name: String, properties: [PropertyDescription] = []) {
        self.init()
        self.entityName = name
        self.properties = properties
    }

    /// Whether the entity is `entity` or one of its sub-entities (at any depth).
    ///
    /// - Parameter entity: the entity to compare with.
    /// - Returns: `true` when `entity` is this entity or one of its superentities.
    public func isKindOf(entity: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The entity's relationships (inherited ones included) whose destination is `entity`
    /// (exactly, not a sub-entity of it).
    ///
    /// - Parameter entity: the destination.
    /// - Returns: the relationships, in ``properties`` order.
    public func relationships(forDestination entity: EntityDescription) -> [RelationshipDescription] {
        properties.compactMap { $0 as? RelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Core Data's version hash of the entity (32 bytes, SHA-256): its name, abstractness,
    /// superentity's version hash, the version hashes of its stored properties (inherited ones
    /// included, in name order; not fetched properties), ``versionHashModifier`` and its
    /// uniqueness constraints, laid out as Core Data lays them out, so that the hash equals the
    /// one Core Data and Xcode compute for the same model (and a compiled mapping model's).
    ///
    /// ``userInfo``, ``managedObjectClassName``, ``renamingIdentifier``, fetch indexes, default
    /// values and validation limits do not change it.
    public var versionHash: Data {
        if frozen.isSet, let lookup { return lookup.versionHash }
        return Data(CoreDataVersionHash.of(self))
    }

    /// A hash of everything about the entity that shapes how Strata stores its objects: what
    /// ``versionHash`` covers in Strata's own terms, and its fetch indexes. 8 bytes (a 64-bit
    /// FNV-1a hash), stable across runs and platforms: a store records it to know whether a
    /// model opens it as it is.
    var layoutHash: Data {
        if frozen.isSet, let lookup { return lookup.layoutHash }
        return computeLayoutHash()
    }

    /// The name, such as `EntityDescription(Employee)`.
    public var description: String { "EntityDescription(\(entityName))" }

    /// Whether two entities are the same object.
    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Freezing

    /// The tables a frozen entity answers from.
    private struct Lookup {
        var properties: [PropertyDescription]
        var propertiesByName: [String: PropertyDescription]
        var attributesByName: [String: AttributeDescription]
        var relationshipsByName: [String: RelationshipDescription]
        var versionHash: Data
        var layoutHash: Data
    }

    /// Computes the lookup tables; called for every entity of a model before any is marked frozen.
    func prepareToFreeze() {
        let all = computeProperties()
        lookup = Lookup(
            properties: all,
            propertiesByName: Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last }),
            attributesByName: Self.byName(all),
            relationshipsByName: Self.byName(all),
            versionHash: Data(CoreDataVersionHash.of(self)), layoutHash: computeLayoutHash())
    }

    /// Marks the entity, its own properties and its indexes frozen.
    func markFrozen() {
        for property in ownProperties {
            property.freezeParts()
            property.frozen.set()
        }
        for index in indexes { index.freeze() }
        frozen.set()
    }

    /// Traps when the model is frozen.
    ///
    /// - Parameter member: the member about to be set.
    func ensureMutable(_ member: String) {
        if frozen.isSet { immutableModelViolation("EntityDescription.\(member) of \(entityName)") }
    }

    // MARK: - Computing

    /// The superentities, root first, then this entity.
    var inheritanceChain: [EntityDescription] {
        var chain: [EntityDescription] = []
        var current: EntityDescription? = self
        while let candidate = current {
            chain.append(candidate)
            current = candidate.superentity
        }
        return chain.reversed()
    }

    /// Every property, inherited ones first; a property redefined lower down takes the place of
    /// the inherited one.
    func computeProperties() -> [PropertyDescription] {
        let chain = inheritanceChain
        if chain.count == 1 { return ownProperties }
        var result: [PropertyDescription] = []
        var positions: [String: Int] = [:]
        for entity in chain {
            for property in entity.ownProperties {
                if let position = positions[property.name] {
                    result[position] = property
                } else {
                    positions[property.name] = result.count
                    result.append(property)
                }
            }
        }
        return result
    }

    /// The properties of type `Kind`, by name.
    private static func byName<Kind: PropertyDescription>(_ properties: [PropertyDescription]) -> [String: Kind] {
        var result: [String: Kind] = [:]
        for case let property as Kind in properties { result[property.name] = property }
        return result
    }

    /// The name of a uniqueness constraint element (a name or a property).
    static func constraintElementName(_ element: Any) -> String {
        if let name = element as? String { return name }
        if let property = element as? PropertyDescription { return property.name }
        return String(describing: element)
    }

    private func computeLayoutHash() -> Data {
        var hasher = VersionHasher()
        hasher.combine("entity")
        hasher.combine(entityName)
        hasher.combine(isAbstract)
        hasher.combine(superentity?.entityName)
        hasher.combine(versionHashModifier)
        let all = computeProperties().filter { !($0 is FetchedPropertyDescription) }.sorted { $0.name < $1.name }
        hasher.combine(all.count)
        for property in all { hasher.combine(property.layoutHash) }
        let sortedIndexes = indexes.sorted { $0.name < $1.name }
        hasher.combine(sortedIndexes.count)
        for index in sortedIndexes {
            hasher.combine(index.name)
            hasher.combine(index.elements.count)
            for element in index.elements {
                hasher.combine(element.propertyName)
                hasher.combine(UInt64(element.collationType.rawValue))
                hasher.combine(element.isAscending)
            }
        }
        let constraints =
            uniquenessConstraints
            .map { $0.map(Self.constraintElementName).sorted() }
            .sorted { $0.lexicographicallyPrecedes($1) }
        hasher.combine(constraints.count)
        for constraint in constraints {
            hasher.combine(constraint.count)
            for element in constraint { hasher.combine(element) }
        }
        return hasher.data
    }
}
