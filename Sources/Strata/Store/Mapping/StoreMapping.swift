internal import StrataStore

/// How a model's entities are laid out as engine entities, rows and columns.
///
/// Every inheritance hierarchy is one engine entity (single-table inheritance, as Core Data's
/// SQLite store): column 0 holds the concrete entity's tag, then one column per persistent
/// attribute and per to-one relationship of any entity of the hierarchy. Entities of one
/// hierarchy that declare one name with one type (an attribute type, or a to-one relationship
/// into one hierarchy) share its column; a declaration of another type gets a column of its
/// own, named `Entity.name`. To-many relationships are found through the fetch index of their
/// inverse to-one column (keeping only rows of the destination's entities where the column is
/// shared); many-to-many, ordered and inverse-less to-many relationships are kept in join
/// entities (source, target, position).
///
/// A class, as ``EntityLayout``: reading it from the coordinator for every object costs one
/// reference count, not one per table.
final class StoreMapping: Sendable {
    /// The engine schema.
    let schema: Schema
    /// The layout of every entity, by name.
    let layouts: [String: EntityLayout]
    /// The entity of every (root entity id, tag) pair.
    let entitiesByTag: [Int: [Int64: EntityDescription]]
    /// The layout of every entity of the model, by the entity's identity: found without hashing
    /// its name.
    private let layoutsByIdentity: [EntityIdentity: EntityLayout]

    /// Lays out `model` (which must be frozen).
    ///
    /// - Throws: ``CoreDataError`` `coreData` when an attribute has no storable type.
    convenience init(model: ManagedObjectModel) throws {
        var entities: [EntitySchema] = []
        var rootIDs: [ObjectIdentifier: Int] = [:]
        let roots = model.entities.filter { $0.superentity == nil }.sorted { $0.entityName < $1.entityName }
        for root in roots {
            rootIDs[ObjectIdentifier(root)] = entities.count
            entities.append(EntitySchema(id: entities.count, name: root.entityName, columns: []))
        }
        func rootOf(_ entity: EntityDescription) -> EntityDescription {
            var root = entity
            while let parent = root.superentity { root = parent }
            return root
        }
        var layouts: [String: EntityLayout] = [:]
        var byTag: [Int: [Int64: EntityDescription]] = [:]
        var joins: [String: [String: JoinLayout]] = [:]

        // The column of every declared persistent attribute and to-one relationship, by declaration.
        var declarationColumns: [ObjectIdentifier: Int] = [:]
        // The tags of the entities whose rows use each column, by engine entity.
        var columnTags: [Int: [Int: Set<Int64>]] = [:]
        for root in roots {
            let storeEntity = rootIDs[ObjectIdentifier(root)]!
            // The concrete entity's tag; fetches filter on it while scanning, so it has no index.
            var columns = [ColumnSchema(name: "_entity", type: .int16, isNullable: false)]
            var byName: [String: [Int]] = [:]
            let family = Self.hierarchy(root)
            for entity in family {
                for property in entity.properties where declarationColumns[ObjectIdentifier(property)] == nil {
                    let column: ColumnSchema
                    if let attribute = property as? AttributeDescription {
                        guard !attribute.isTransient else { continue }
                        column = ColumnSchema(
                            name: attribute.name, type: try Self.columnType(attribute, entity: entity),
                            isNullable: true,
                            isIndexed: Self.isIndexed(attribute.name, in: entity),
                            keepsTombstone: attribute.preservesValueInHistoryOnDeletion)
                    } else if let relationship = property as? RelationshipDescription, !relationship.isToMany,
                        !relationship.isTransient,
                        let destination = relationship.destinationEntity
                    {
                        column = ColumnSchema(
                            name: relationship.name,
                            type: .reference(entity: rootIDs[ObjectIdentifier(rootOf(destination))]!))
                    } else {
                        continue
                    }
                    // Entities of one hierarchy declaring one name with one type share its column
                    // (their rows are told apart by the tag); another type gets a column of its own.
                    if let shared = byName[property.name]?.first(where: { columns[$0].type == column.type }) {
                        columns[shared].isIndexed = columns[shared].isIndexed || column.isIndexed
                        declarationColumns[ObjectIdentifier(property)] = shared
                        continue
                    }
                    declarationColumns[ObjectIdentifier(property)] = columns.count
                    var named = column
                    if byName[property.name] != nil { named.name = "\(entity.entityName).\(property.name)" }
                    byName[property.name, default: []].append(columns.count)
                    columns.append(named)
                }
            }
            entities[storeEntity].columns = columns
            var tags: [Int64: EntityDescription] = [:]
            for (index, entity) in family.enumerated() {
                let tag = Int64(index + 1)
                tags[tag] = entity
                for property in entity.properties {
                    if let column = declarationColumns[ObjectIdentifier(property)] {
                        columnTags[storeEntity, default: [:]][column, default: []].insert(tag)
                    }
                }
            }
            byTag[storeEntity] = tags
        }

        // Join entities for to-many relationships that no inverse to-one column can answer.
        for entity in model.entities.sorted(by: { $0.entityName < $1.entityName }) {
            for case let relationship as RelationshipDescription in entity.ownProperties
            where relationship.isToMany && !relationship.isTransient {
                guard let destination = relationship.destinationEntity else { continue }
                let inverse = relationship.inverseRelationship
                if let inverse, !inverse.isToMany, !relationship.isOrdered { continue }
                if let inverse, inverse.isToMany, let existing = joins[destination.entityName]?[inverse.name] {
                    joins[entity.entityName, default: [:]][relationship.name] = JoinLayout(
                        storeEntity: existing.storeEntity, isSource: !existing.isSource,
                        isOrdered: relationship.isOrdered,
                        writesPairs: !existing.writesPairs)
                    continue
                }
                let id = entities.count
                entities.append(
                    EntitySchema(
                        id: id, name: "_join_\(entity.entityName)_\(relationship.name)",
                        columns: [
                            ColumnSchema(
                                name: "source", type: .reference(entity: rootIDs[ObjectIdentifier(rootOf(entity))]!),
                                isNullable: false),
                            ColumnSchema(
                                name: "target",
                                type: .reference(entity: rootIDs[ObjectIdentifier(rootOf(destination))]!),
                                isNullable: false),
                            ColumnSchema(name: "position", type: .int64, isNullable: false),
                        ]))
                // The pairs' positions are the order of the side that keeps one.
                let onlyInverseOrdered =
                    inverse?.isToMany == true && inverse?.isOrdered == true && !relationship.isOrdered
                joins[entity.entityName, default: [:]][relationship.name] = JoinLayout(
                    storeEntity: id, isSource: true, isOrdered: relationship.isOrdered, writesPairs: !onlyInverseOrdered
                )
            }
        }

        for entity in model.entities {
            let root = rootOf(entity)
            let storeEntity = rootIDs[ObjectIdentifier(root)]!
            let members = Self.hierarchy(root)
            let tag = Int64(members.firstIndex { $0 === entity }! + 1)
            let subtree = Self.hierarchy(entity).map { member in Int64(members.firstIndex { $0 === member }! + 1) }
            var inheritedJoins: [String: JoinLayout] = [:]
            var current: EntityDescription? = entity
            while let candidate = current {
                inheritedJoins.merge(joins[candidate.entityName] ?? [:]) { own, _ in own }
                current = candidate.superentity
            }
            var columns: [String: Int] = [:]
            for property in entity.properties {
                if let column = declarationColumns[ObjectIdentifier(property)] { columns[property.name] = column }
            }
            let family = Set(subtree)
            layouts[entity.entityName] = EntityLayout(
                storeEntity: storeEntity, tag: tag, tags: subtree, columns: columns,
                slotColumns: entity.properties.map { property in
                    property.isTransient || (property as? RelationshipDescription)?.isToMany == true
                        ? -1 : columns[property.name] ?? -1
                },
                sharedColumns: Set(
                    columns.values.filter { !(columnTags[storeEntity]?[$0] ?? []).isSubset(of: family) }),
                joins: inheritedJoins)
        }
        self.init(schema: try Schema(entities: entities), layouts: layouts, entitiesByTag: byTag)
    }

    /// A mapping of its parts; every entity of `entitiesByTag` is found by identity.
    init(schema: Schema, layouts: [String: EntityLayout], entitiesByTag: [Int: [Int64: EntityDescription]]) {
        self.schema = schema
        self.layouts = layouts
        self.entitiesByTag = entitiesByTag
        layoutsByIdentity = Dictionary(
            uniqueKeysWithValues: entitiesByTag.values.flatMap(\.values).compactMap { entity in
                layouts[entity.entityName].map { (EntityIdentity(entity), $0) }
            })
    }

    /// Whether `other` makes the same engine schema: the two lay rows out alike.
    func hasSameSchema(as other: StoreMapping) -> Bool {
        schema == other.schema
    }

    /// The layout of `entity`: by identity for the model's own entities, else by name.
    func layout(of entity: EntityDescription) -> EntityLayout? {
        layoutsByIdentity[EntityIdentity(entity)] ?? layouts[entity.entityName]
    }

    /// The layout of `entity`, as ``layout(of:)`` finds it.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the model has no entity of its name (an
    ///   entity of another model).
    func requiredLayout(of entity: EntityDescription) throws -> EntityLayout {
        guard let layout = layout(of: entity) else {
            throw CoreDataError(.coreData, "the model has no entity \(entity.entityName)")
        }
        return layout
    }

    /// The entity and its sub-entities, depth first.
    static func hierarchy(_ entity: EntityDescription) -> [EntityDescription] {
        [entity] + entity.subentities.flatMap(hierarchy)
    }

    /// Whether a fetch index or uniqueness constraint of `entity` (or a superentity) names `property`.
    private static func isIndexed(_ property: String, in entity: EntityDescription) -> Bool {
        var current: EntityDescription? = entity
        while let candidate = current {
            if candidate.indexes.contains(where: { $0.elements.contains { $0.property?.name == property } }) {
                return true
            }
            if candidate.uniquenessConstraints.contains(where: { $0.contains { ($0 as? String) == property } }) {
                return true
            }
            current = candidate.superentity
        }
        return false
    }

    /// The engine column type of an attribute.
    private static func columnType(_ attribute: AttributeDescription, entity: EntityDescription) throws -> ColumnType {
        switch attribute.attributeType {
        case .integer16AttributeType: return .int16
        case .integer32AttributeType: return .int32
        case .integer64AttributeType: return .int64
        case .decimalAttributeType: return .decimal
        case .doubleAttributeType: return .double
        case .floatAttributeType: return .float
        case .stringAttributeType: return .string
        case .booleanAttributeType: return .bool
        case .dateAttributeType: return .date
        case .binaryDataAttributeType: return .binary
        case .UUIDAttributeType: return .uuid
        case .URIAttributeType, .objectIDAttributeType: return .uri
        case .transformableAttributeType: return .transformable
        case .compositeAttributeType: return .binary
        default:
            throw CoreDataError(.coreData, "\(entity.entityName).\(attribute.name) has no storable attribute type")
        }
    }
}

/// An entity as a dictionary key, by identity, hashed with ``HashMixing``.
private struct EntityIdentity: Hashable {
    let id: ObjectIdentifier

    init(_ entity: EntityDescription) { id = ObjectIdentifier(entity) }

    func _rawHashValue(seed: Int) -> Int { HashMixing.mix(UInt64(UInt(bitPattern: id)), seed: seed) }
}
