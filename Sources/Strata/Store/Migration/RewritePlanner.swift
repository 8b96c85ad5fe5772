internal import StrataStore

/// Works out how an ``InPlaceRewrite`` converts each stored row: which engine entity each
/// hierarchy and join entity becomes, and for each entity tag, how the new row's columns are
/// filled from the old row's.
struct RewritePlanner {
    /// The source model laid over the stored schema.
    let before: StoreMapping
    /// The destination model's own layout (the schema after the rewrite).
    let after: StoreMapping
    let source: ManagedObjectModel
    let destination: ManagedObjectModel

    /// The new engine entity of each old one whose rows are kept (for a hierarchy, the entity of
    /// the first tag planned; ``routes`` has every tag's).
    private var entities: [Int: Int] = [:]
    /// Per old hierarchy entity, the new engine entity of each entity tag's rows.
    private var routes: [Int: [Int64: Int]] = [:]
    /// Per old hierarchy entity and new engine entity, the new column of each old column.
    private var routedColumns: [Int: [Int: [Int: Int]]] = [:]
    /// Per old hierarchy entity and entity tag, how its rows convert (join entities' rows stay as they are).
    private var rows: [Int: [Int64: RowPlan]] = [:]
    /// Per old engine entity, the new column of each old column.
    private var columns: [Int: [Int: Int]] = [:]
    /// The old and new engine entities of every relationship's target, with the old target's
    /// tags: references keep their keys, so the old target's rows must become the new target's.
    private var targets: [(old: Int, tags: [Int64], new: Int)] = []
    /// The required attributes without a default value that stored objects must hold a value for.
    private(set) var requirements: [RequiredValue] = []
    /// Per old hierarchy entity, the entity tags of removed entities whose rows are dropped.
    private(set) var dropped: [Int: Set<Int64>] = [:]
    /// Per old join entity, the old engine entity each reference column leads to.
    private var joinTargets: [Int: [Int: Int]] = [:]
    /// The new to-one columns filled from their inverse's column (a one-to-many become one-to-one).
    private(set) var fills: [InverseFill] = []

    init(before: StoreMapping, after: StoreMapping, source: ManagedObjectModel, destination: ManagedObjectModel) {
        self.before = before
        self.after = after
        self.source = source
        self.destination = destination
    }

    /// Plans the rewrite through `mapping`; `false` when a rewrite keeping keys cannot make it.
    ///
    /// - Throws: ``CoreDataError`` when a default value cannot be stored.
    mutating func plan(_ mapping: MappingModel) throws -> Bool {
        var mapped = Set<String>()
        for entityMapping in mapping.entityMappings {
            if let policy = entityMapping.entityMigrationPolicyClassName, !policy.isEmpty,
                policy != "EntityMigrationPolicy"
            {
                return false
            }
            // Only a mapping of every source object can keep keys.
            if let expression = entityMapping.sourceExpression, let name = entityMapping.sourceEntityName,
                expression.expressionFormat
                    != MappingModel.defaultSourceExpression(of: name, predicate: nil).expressionFormat
            {
                return false
            }
            switch entityMapping.mappingType {
            case .addEntityMappingType, .removeEntityMappingType:
                continue
            case .copyEntityMappingType, .transformEntityMappingType:
                guard let from = entityMapping.sourceEntityName.flatMap({ source.entitiesByName[$0] }),
                    let to = entityMapping.destinationEntityName.flatMap({ destination.entitiesByName[$0] }),
                    try planEntity(from, to, entityMapping)
                else { return false }
                mapped.insert(from.entityName)
            default:
                return false
            }
        }
        // An entity removed from a hierarchy that stays loses its objects by their tag.
        for entity in source.entities where !mapped.contains(entity.entityName) {
            guard let layout = before.layout(of: entity), entities[layout.storeEntity] != nil else { continue }
            guard canDrop(entity) else { return false }
            dropped[layout.storeEntity, default: []].insert(layout.tag)
        }
        // Keys stay unique only when no two old entities become one.
        var sources: [Int: Set<Int>] = [:]
        for (old, new) in entities { sources[new, default: []].insert(old) }
        for (old, byTag) in routes { for new in byTag.values { sources[new, default: []].insert(old) } }
        guard sources.values.allSatisfy({ $0.count == 1 }) else { return false }
        // Every object a reference can lead to (a dropped one is cleared) is in the new target.
        return targets.allSatisfy { target in
            guard let byTag = routes[target.old] else { return entities[target.old] == target.new }
            return target.tags.allSatisfy { byTag[$0] == target.new || dropped[target.old]?.contains($0) == true }
        }
    }

    /// What the engine does with the plan.
    ///
    /// - Parameter droppedKeys: per old engine entity, the keys of the stored objects of the
    ///   ``dropped`` entity tags: references to them are cleared, pairs holding them dropped.
    /// - Parameter filled: per ``fills`` entry, the related object's key of each object.
    func logRewrite(droppedKeys: [Int: Set<Int64>] = [:], filled: [[Int64: Int64]] = []) -> LogRewrite {
        let rows = rows, dropped = dropped, joinTargets = joinTargets
        // Routes only for hierarchies whose rows go to several new entities.
        let split = routes.filter { Set($0.value.values).count > 1 }
        var rewrite = LogRewrite(schema: after.schema, entities: entities, columns: columns) { entity, key, row in
            guard let plans = rows[entity] else {
                // A pair of a join entity goes with either object.
                for (column, target) in joinTargets[entity] ?? [:] {
                    if case .reference(let other) = row[column], droppedKeys[target]?.contains(other) == true {
                        return nil
                    }
                }
                return row
            }
            if case .int(let tag) = row[0], dropped[entity]?.contains(tag) == true { return nil }
            // A tombstone of an older record keeps no tag: its kept columns sit alike under every tag's plan.
            let plan: RowPlan?
            switch row[0] {
            case .null: plan = plans.min(by: { $0.key < $1.key })?.value
            case .int(let tag): plan = plans[tag]
            default: plan = nil
            }
            guard let plan else {
                throw CoreDataError(
                    .migration,
                    "the stored row \(key) of engine entity \(entity) has an entity tag the migration does not map")
            }
            return try plan.convert(row, key: key, droppedKeys: droppedKeys, filled: filled)
        }
        rewrite.routes = split
        rewrite.routedColumns = routedColumns.filter { split[$0.key] != nil }
        return rewrite
    }

    /// Whether the objects of `entity`, removed from a hierarchy that stays, can be dropped by
    /// their tag, as a removed entity loses its objects: every relationship of the new model that
    /// can lead to them is optional (references to them are cleared, their pairs dropped).
    private func canDrop(_ entity: EntityDescription) -> Bool {
        for other in destination.entities {
            for relationship in other.relationshipsByName.values
            where !relationship.isTransient && !relationship.isOptional {
                guard let target = relationship.destinationEntity else { continue }
                let old = MappingModel.counterpart(
                    of: target.renamingIdentifier, target.entityName, in: source.entitiesByName)
                if let old, entity.isKindOf(entity: old) || old.isKindOf(entity: entity) { return false }
            }
        }
        return true
    }

    /// Whether `old`, a to-many kept through its to-one inverse's column, becomes `new`, a to-one
    /// whose inverse is the old inverse (one-to-many becoming one-to-one): the new column is
    /// filled from the inverse's column, each object's one related object.
    private static func narrowsOneToMany(
        _ old: RelationshipDescription, _ new: RelationshipDescription, _ was: EntityLayout
    ) -> Bool {
        old.isToMany && !new.isToMany && !old.isOrdered && was.joins[old.name] == nil && keepsToOneInverse(old, new)
    }

    /// Whether `old`, a to-one whose inverse is a to-one, becomes `new`, a to-many kept through
    /// its inverse's column that keeps the old inverse's pairs (one-to-one becoming one-to-many):
    /// the inverse's column holds every pair, so `old`'s own column is dropped without loss.
    private static func widensOneToOne(
        _ old: RelationshipDescription, _ new: RelationshipDescription, _ now: EntityLayout
    ) -> Bool {
        !old.isToMany && new.isToMany && now.columns[new.name] == nil && now.joins[new.name] == nil
            && keepsToOneInverse(old, new)
    }

    /// Whether `old` and `new` both have a to-one inverse, `new`'s mapping from `old`'s: the
    /// inverse's column holds the pairs before and after.
    private static func keepsToOneInverse(_ old: RelationshipDescription, _ new: RelationshipDescription) -> Bool {
        guard let oldInverse = old.inverseRelationship, !oldInverse.isToMany, !oldInverse.isTransient,
            let inverse = new.inverseRelationship, !inverse.isToMany
        else { return false }
        return MappingModel.counterpart(of: inverse.renamingIdentifier, inverse.name, in: [oldInverse.name: oldInverse])
            != nil
    }

    /// Records that `key` maps to `value` in `table`; `false` when it already maps elsewhere.
    private static func record(_ key: Int, _ value: Int, in table: inout [Int: Int]) -> Bool {
        if let existing = table[key], existing != value { return false }
        table[key] = value
        return true
    }

    /// Plans the rows of `from` becoming rows of `to`.
    private mutating func planEntity(
        _ from: EntityDescription, _ to: EntityDescription, _ mapping: EntityMapping
    ) throws -> Bool {
        guard let was = before.layout(of: from), let now = after.layout(of: to),
            AddedUniquenessConstraint.names(of: to).subtracting(AddedUniquenessConstraint.names(of: from)).isEmpty
                || AddedUniquenessConstraint.checkableBeforeRewrite(to, from: from, before: before)
        else { return false }
        if entities[was.storeEntity] == nil { entities[was.storeEntity] = now.storeEntity }
        routes[was.storeEntity, default: [:]][was.tag] = now.storeEntity
        var columnMap = routedColumns[was.storeEntity]?[now.storeEntity] ?? [0: 0]
        var steps: [ColumnStep] = []
        let attributeMappings = mapping.attributeMappingsByName
        let relationshipMappings = mapping.relationshipMappingsByName
        for property in to.properties where !property.isTransient {
            if let attribute = property as? AttributeDescription {
                guard !(attribute is DerivedAttributeDescription), let column = now.columns[attribute.name] else {
                    return false
                }
                let fallback =
                    try attribute.defaultValue.map { try ValueConversion.storeValue($0, for: attribute) } ?? .null
                var step = ColumnStep(column: column, source: -1, conversion: nil, fallback: fallback)
                if let attributeMapping = attributeMappings[attribute.name], attributeMapping.valueExpression != nil {
                    guard let path = attributeMapping.sourceKeyPath, let old = from.attributesByName[path], !old.isTransient,
                        !(old is DerivedAttributeDescription), let oldColumn = was.columns[path],
                        Self.record(oldColumn, column, in: &columnMap)
                    else { return false }
                    step.source = oldColumn
                    if old.attributeType != attribute.attributeType {
                        guard !(old is CompositeAttributeDescription), !(attribute is CompositeAttributeDescription),
                            old.attributeType != .transformableAttributeType,
                            attribute.attributeType != .transformableAttributeType,
                            MigrationValueConversion.canConvert(old.attributeType, to: attribute.attributeType)
                        else { return false }
                        step.conversion = ValueTypeConversion(from: old, to: attribute, entity: to)
                    } else if old.valueTransformerName != attribute.valueTransformerName
                        || (old is CompositeAttributeDescription) != (attribute is CompositeAttributeDescription)
                    {
                        return false
                    }
                }
                if !attribute.isOptional && fallback.isNull {
                    requirements.append(
                        RequiredValue(
                            entity: was.storeEntity, tag: was.tag, column: step.source,
                            name: "\(to.entityName).\(attribute.name)"))
                }
                steps.append(step)
            } else if let relationship = property as? RelationshipDescription {
                let relationshipMapping = relationshipMappings[relationship.name]
                let old = relationshipMapping?.sourceKeyPath.flatMap { from.relationshipsByName[$0] }
                if relationshipMapping?.valueExpression != nil && old == nil { return false }
                var narrows = false
                if let old {
                    narrows = Self.narrowsOneToMany(old, relationship, was)
                    guard !old.isTransient,
                        old.isToMany == relationship.isToMany || narrows || Self.widensOneToOne(old, relationship, now),
                        relationship.minCount <= old.minCount,
                        narrows || relationship.maxCount == 0
                            || (old.maxCount != 0 && relationship.maxCount >= old.maxCount),
                        relationship.isOptional || !old.isOptional,
                        let target = relationship.destinationEntity.flatMap(after.layout(of:)),
                        let oldTarget = old.destinationEntity.flatMap(before.layout(of:))
                    else { return false }
                    targets.append((oldTarget.storeEntity, oldTarget.tags, target.storeEntity))
                } else if !relationship.isOptional {
                    return false
                }
                if let column = now.columns[relationship.name] {
                    var step = ColumnStep(column: column, source: -1, conversion: nil, fallback: .null)
                    if let old, narrows {
                        // Filled from the inverse's column of the related objects (checked to be one each).
                        guard let inverse = old.inverseRelationship,
                            let oldTarget = old.destinationEntity.flatMap(before.layout(of:)),
                            let inverseColumn = oldTarget.columns[inverse.name]
                        else { return false }
                        step.fill = fills.count
                        step.target = oldTarget.storeEntity
                        fills.append(
                            InverseFill(
                                entity: oldTarget.storeEntity, tags: oldTarget.tags, column: inverseColumn,
                                name: "\(to.entityName).\(relationship.name)"))
                    } else if let old {
                        guard let oldColumn = was.columns[old.name], Self.record(oldColumn, column, in: &columnMap)
                        else { return false }
                        step.source = oldColumn
                        step.target = targets.last?.old
                    }
                    steps.append(step)
                } else if let join = now.joins[relationship.name] {
                    // The pairs are kept in a join entity on both sides, the owner in the same column.
                    guard let old else { continue }
                    guard let oldJoin = was.joins[old.name], oldJoin.isSource == join.isSource,
                        oldJoin.isOrdered == join.isOrdered,
                        Self.record(oldJoin.storeEntity, join.storeEntity, in: &entities)
                    else { return false }
                    columns[oldJoin.storeEntity] = [0: 0, 1: 1, 2: 2]
                    joinTargets[oldJoin.storeEntity] = [
                        oldJoin.ownerColumn: was.storeEntity, oldJoin.otherColumn: targets.last!.old,
                    ]
                } else if let old, was.joins[old.name] != nil {
                    // Kept in a join entity before, through its inverse's column now: the pairs would be lost.
                    return false
                }
            }
        }
        routedColumns[was.storeEntity, default: [:]][now.storeEntity] = columnMap
        if entities[was.storeEntity] == now.storeEntity { columns[was.storeEntity] = columnMap }
        rows[was.storeEntity, default: [:]][was.tag] = RowPlan(
            tag: now.tag, width: after.schema.entities[now.storeEntity].columns.count, steps: steps)
        return true
    }
}

/// How the rows of one old entity tag become rows of the new entity.
private struct RowPlan: Sendable {
    /// The new entity tag.
    let tag: Int64
    /// The new engine entity's column count.
    let width: Int
    /// How each column the new entity uses is filled.
    let steps: [ColumnStep]

    /// The new row of `row` (a tombstone without tag stays without one), with references to
    /// `droppedKeys` (per old engine entity) cleared.
    ///
    /// - Throws: ``CoreDataError`` `migration` when a value does not convert.
    func convert(_ row: Row, key: Int64, droppedKeys: [Int: Set<Int64>], filled: [[Int64: Int64]]) throws -> Row {
        var values = [Value](repeating: .null, count: width)
        values[0] = row[0].isNull ? .null : .int(tag)
        for step in steps {
            var value = step.source >= 0 && step.source < row.values.count ? row[step.source] : .null
            if let fill = step.fill, fill < filled.count, let related = filled[fill][key] {
                value = .reference(related)
            }
            if let conversion = step.conversion, !value.isNull { value = try conversion.convert(value) }
            if let target = step.target, case .reference(let key) = value, droppedKeys[target]?.contains(key) == true {
                value = .null
            }
            if value.isNull { value = step.fallback }
            values[step.column] = value
        }
        return Row(values)
    }
}

/// How one column of a new row is filled.
private struct ColumnStep: Sendable {
    /// The new column.
    var column: Int
    /// The old column it is read from, or -1 for a new property.
    var source: Int
    /// The conversion of an attribute whose type changed.
    var conversion: ValueTypeConversion?
    /// The value when the old row has none (the attribute's default value).
    var fallback: Value
    /// For a to-one relationship, the old engine entity it leads to (its references to dropped
    /// objects are cleared).
    var target: Int? = nil
    /// For a to-one filled from its inverse's column, the index of its ``InverseFill``.
    var fill: Int? = nil
}

/// A new to-one column filled from the to-one inverse's column of the related objects (a
/// one-to-many become one-to-one): each object's one related object.
struct InverseFill {
    /// The old engine entity of the related objects.
    let entity: Int
    /// The entity tags of the related objects.
    let tags: [Int64]
    /// The inverse's old column, which references the object.
    let column: Int
    /// `Entity.relationship`, for the error.
    let name: String
}

/// A required attribute without a default value: every stored object of an entity tag must
/// hold a value in the old column it is read from.
struct RequiredValue {
    /// The old engine entity.
    let entity: Int
    /// The entity tag of the objects concerned.
    let tag: Int64
    /// The old column, or -1 for an attribute the old model did not have (no object has a value).
    let column: Int
    /// `Entity.attribute`, for the error.
    let name: String
}

/// The conversion of a stored value from one attribute type to another, as lightweight migration converts it.
private struct ValueTypeConversion: Sendable {
    let from: AttributeDescription
    let to: AttributeDescription
    let entity: EntityDescription

    /// `value` (stored for ``from``) stored for ``to``.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the value does not fit.
    func convert(_ value: Value) throws -> Value {
        let object = try RowDecoding.attributeValue(value, for: from, coordinator: nil)
        return try ValueConversion.storeValue(
            try MigrationValueConversion.convert(object, to: to, entity: entity), for: to)
    }
}
