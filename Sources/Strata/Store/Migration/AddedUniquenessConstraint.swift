import Foundation
import Logging
internal import StrataStore

private let logger = Logger(label: "strata.migration")

/// A uniqueness constraint a migration step adds to an entity that has stored objects, checked
/// as Core Data's store checks it when it builds the constraint's unique index: no two stored
/// objects of the entity (or its sub-entities) may hold the same values for it. An object with
/// no value for one of the properties is not constrained (as a save does not constrain it).
struct AddedUniquenessConstraint {
    /// The destination entity declaring the constraint.
    let entity: String
    /// The constrained properties, in the constraint's order.
    let properties: [String]
    /// The old engine entity holding the objects.
    let storeEntity: Int
    /// The entity tags of the objects concerned (the old entity's and its sub-entities').
    let tags: Set<Int64>
    /// For each property: the old column its value is read from (-1 for a property the old model
    /// did not have), the value every stored object has when there is no column (an added
    /// attribute's default), and the attribute (`nil` for a to-one relationship), for the error.
    let sources: [(column: Int, fallback: Value, attribute: AttributeDescription?)]

    /// The uniqueness constraints `entity` declares, each as its sorted property names (as its
    /// version hash sees them).
    static func names(of entity: EntityDescription) -> Set<[String]> {
        Set(entity.uniquenessConstraints.map { $0.map(EntityDescription.constraintElementName).sorted() })
    }

    /// Whether the constraints `entity` adds to `old` (its source entity, laid out by `before`)
    /// can be checked on the stored rows before a rewrite in place converts them: the objects
    /// they cover are exactly the stored objects of `old` and its sub-entities, and each
    /// constrained property is an attribute read from an old attribute of the same type (the
    /// rewrite keeps its values as they are).
    static func checkableBeforeRewrite(
        _ entity: EntityDescription, from old: EntityDescription, before: StoreMapping
    ) -> Bool {
        guard let layout = before.layout(of: old), let source = old.managedObjectModel?.entitiesByName else {
            return false
        }
        var tags = Set<Int64>()
        for member in StoreMapping.hierarchy(entity) {
            guard
                let counterpart = MappingModel.counterpart(
                    of: member.renamingIdentifier, member.entityName, in: source),
                let was = before.layout(of: counterpart), was.storeEntity == layout.storeEntity
            else { return false }
            tags.insert(was.tag)
        }
        guard tags == Set(layout.tags) else { return false }
        let existing = names(of: old)
        for constraint in entity.uniquenessConstraints
        where !existing.contains(constraint.map(EntityDescription.constraintElementName).sorted()) {
            for name in constraint.map(EntityDescription.constraintElementName) {
                guard let attribute = entity.attributesByName[name],
                    let was = old.attributesByName[attribute.renamingIdentifier ?? name] ?? old.attributesByName[name],
                    was.attributeType == attribute.attributeType, !(was is DerivedAttributeDescription),
                    !was.isTransient
                else { return false }
            }
        }
        return true
    }

    /// Checks the stored objects of the store at `url` against every uniqueness constraint
    /// `destination` adds to an entity of `source`, in one pass over each entity concerned.
    ///
    /// - Throws: ``CoreDataError`` `migrationConstraintViolation` naming the entity, the
    ///   constrained properties and the values two stored objects share (the store is not
    ///   changed), or `migration` when the store cannot be read.
    /// - Returns: how many added constraints were checked.
    @discardableResult
    static func checkStoredObjects(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel
    ) throws -> Int {
        let stored: Schema
        do {
            stored = try Store.storedSchema(at: url)
        } catch {
            throw CoreDataError(
                .migration, "the store at \(url.path) cannot be read to check its objects: \(error)",
                underlyingError: error)
        }
        let added = try Self.added(from: source, to: destination, over: stored)
        guard !added.isEmpty else { return 0 }
        let store = try InPlaceRewrite.openForChecking(at: url)
        defer { try? store.close() }
        for constraint in added { try constraint.check(store) }
        logger.debug(
            "checked added uniqueness constraints", metadata: ["path": "\(url.path)", "constraints": "\(added.count)"])
        return added.count
    }

    /// The constraints `destination` adds to the entities of `source` laid over `stored`.
    private static func added(
        from source: ManagedObjectModel, to destination: ManagedObjectModel, over stored: Schema
    ) throws -> [AddedUniquenessConstraint] {
        let before = try PersistentStoreCoordinator(managedObjectModel: source).mapping.get().evolved(onto: stored)
        var added: [AddedUniquenessConstraint] = []
        for entity in destination.entities {
            guard
                let old = MappingModel.counterpart(
                    of: entity.renamingIdentifier, entity.entityName, in: source.entitiesByName),
                let layout = before.layout(of: old)
            else { continue }
            let existing = names(of: old)
            for constraint in entity.uniquenessConstraints {
                let properties = constraint.map(EntityDescription.constraintElementName)
                guard !properties.isEmpty, !existing.contains(properties.sorted()) else { continue }
                var sources: [(column: Int, fallback: Value, attribute: AttributeDescription?)] = []
                for name in properties {
                    guard let property = entity.propertiesByName[name] else { break }
                    let was = old.propertiesByName[property.renamingIdentifier ?? name] ?? old.propertiesByName[name]
                    let column = was.flatMap { layout.columns[$0.name] } ?? -1
                    if let attribute = property as? AttributeDescription {
                        // Stored rows read an added attribute as its default, or nil when it has none (InPlaceMigration).
                        let fallback =
                            column < 0
                            ? try attribute.defaultValue.map { try ValueConversion.storeValue($0, for: attribute) }
                                ?? .null : .null
                        sources.append((column, fallback, attribute))
                    } else if let relationship = property as? RelationshipDescription, !relationship.isToMany {
                        sources.append((column, .null, nil))
                    } else {
                        break
                    }
                }
                // A constraint naming a to-many or unknown property constrains nothing a save checks either.
                guard sources.count == properties.count else { continue }
                added.append(
                    AddedUniquenessConstraint(
                        entity: entity.entityName, properties: properties, storeEntity: layout.storeEntity,
                        tags: Set(layout.tags), sources: sources))
            }
        }
        return added
    }

    /// Reads the constrained values of every live object concerned, stopping at the first two
    /// objects that share them.
    ///
    /// - Throws: ``CoreDataError`` `migrationConstraintViolation` for two such objects.
    private func check(_ store: Store) throws {
        var seen: [[Value]: PrimaryKey] = [:]
        var duplicate: (first: PrimaryKey, second: PrimaryKey, values: [Value])?
        let columns = [0] + sources.map(\.column).filter { $0 >= 0 }
        try store.scan(storeEntity, columns: columns) { key, row in
            guard duplicate == nil, case .int(let tag) = row[0], tags.contains(tag) else { return }
            var values: [Value] = []
            values.reserveCapacity(sources.count)
            for source in sources {
                let value =
                    source.column >= 0 && source.column < row.values.count ? row[source.column] : source.fallback
                if value.isNull { return }
                values.append(value)
            }
            if let first = seen.updateValue(key, forKey: values) { duplicate = (first, key, values) }
        }
        guard let duplicate else { return }
        let shown = zip(properties, zip(sources, duplicate.values)).map { name, pair in
            "\(name) = \(Self.describe(pair.1, pair.0.attribute))"
        }
        throw CoreDataError(
            .migrationConstraintViolation,
            "the uniqueness constraint (\(properties.joined(separator: ", "))) added to \(entity) is violated by stored objects: "
                + "\(duplicate.first) and \(duplicate.second) both have \(shown.joined(separator: ", ")); the store is unchanged",
            key: properties.joined(separator: ","))
    }

    /// A stored value as people read it: the attribute's value, or the related object's key.
    private static func describe(_ value: Value, _ attribute: AttributeDescription?) -> String {
        if case .reference(let key) = value { return "object \(key)" }
        guard let attribute, let object = try? RowDecoding.attributeValue(value, for: attribute, coordinator: nil)
        else { return "\(value)" }
        if let string = object as? String { return "\"\(string)\"" }
        return "\(object)"
    }
}
