import Foundation
import StrataTestSupport
@testable import Strata

/// A random model for the mapping property test: a few entities, some in inheritance trees
/// (parents abstract or not), attributes of random types and relationships of every shape
/// (one-to-one, one-to-many, ordered, many-to-many, without inverse), whose names are drawn from a
/// small pool so that siblings and unrelated entities declare the same names, often with other
/// types. Every root entity has an Integer 64 `uid` that names its objects across reopening.
struct RandomGraphModel {
    /// The model.
    let model: ManagedObjectModel
    /// The entities, in creation order.
    let entities: [EntityDescription]
    /// The entities that are the destination of a relationship without inverse (their objects are
    /// not deleted: nothing nullifies references to them, in Core Data either).
    let referencedWithoutInverse: [EntityDescription]

    /// The names attributes are drawn from.
    private static let attributeNames = ["value", "count", "title", "notes", "link"]
    /// The names relationships are drawn from: few, so that siblings often declare one name.
    private static let relationshipNames = ["owner", "parent", "link"]
    /// The attribute types drawn.
    private static let types: [AttributeDescription.AttributeType] = [
        .integer16, .integer32, .integer64, .string, .double, .boolean,
    ]

    /// Draws a model.
    init(random: inout SplitMix64) {
        var entities: [EntityDescription] = []
        for index in 0..<Int.random(in: 3...6, using: &random) {
            let entity = EntityDescription(name: "E\(index)")
            if index > 0, Int.random(in: 0..<3, using: &random) > 0 {
                let parent = entities[Int.random(in: 0..<index, using: &random)]
                parent.subentities.append(entity)
            }
            entities.append(entity)
        }
        for entity in entities where !entity.subentities.isEmpty { entity.isAbstract = Bool.random(using: &random) }
        for entity in entities where entity.superentity == nil {
            entity.properties = [ModelBuilder.attribute("uid", .integer64)]
        }

        var numbered = 0
        /// A name of the pool no entity of `entities`' lines declares yet, or a new numbered one.
        func freeName(
            for entities: [EntityDescription], from names: [String] = Self.relationshipNames, random: inout SplitMix64
        ) -> String {
            let taken = Set(
                entities.flatMap { entity in
                    (entity.inheritanceChain + StoreMapping.hierarchy(entity)).flatMap { $0.ownProperties.map(\.name) }
                })
            let free = names.filter { !taken.contains($0) }
            if let name = free.randomElement(using: &random) { return name }
            numbered += 1
            return "p\(numbered)"
        }
        for entity in entities {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let name = freeName(for: [entity], from: Self.attributeNames, random: &random)
                entity.properties.append(ModelBuilder.attribute(name, Self.types.randomElement(using: &random)!))
            }
        }
        func rootOf(_ entity: EntityDescription) -> EntityDescription { entity.inheritanceChain[0] }
        var withoutInverse: [EntityDescription] = []
        for _ in 0..<Int.random(in: 3...6, using: &random) {
            let source = entities.randomElement(using: &random)!
            let destination = entities.randomElement(using: &random)!
            let name = freeName(for: [source], random: &random)
            // Two entities of one hierarchy, neither a kind of the other (siblings, cousins).
            let pairs = entities.flatMap { first in
                entities.filter { second in
                    first.name! < second.name! && rootOf(first) === rootOf(second) && !first.isKindOf(entity: second)
                        && !second.isKindOf(entity: first)
                }.map { (first, $0) }
            }
            if let (first, second) = pairs.randomElement(using: &random), Int.random(in: 0..<3, using: &random) == 0 {
                // Both declare one to-one name into one destination hierarchy, each with its own inverse.
                let shared = freeName(for: [first, second], random: &random)
                for sibling in [first, second] {
                    let target = entities.filter { rootOf($0) === rootOf(destination) }.randomElement(using: &random)!
                    let forward = ModelBuilder.relationship(shared, from: sibling, to: target)
                    let toMany = Int.random(in: 0..<4, using: &random) > 0
                    let back = ModelBuilder.relationship(
                        freeName(for: [target, first, second], random: &random), from: target, to: sibling,
                        toMany: toMany,
                        isOrdered: toMany && Bool.random(using: &random))
                    ModelBuilder.inverse(forward, back)
                }
                continue
            }
            switch Int.random(in: 0..<6, using: &random) {
            case 0:  // one-to-one
                let forward = ModelBuilder.relationship(name, from: source, to: destination)
                ModelBuilder.inverse(
                    forward,
                    ModelBuilder.relationship(
                        freeName(for: [destination], random: &random), from: destination, to: source))
            case 1:  // one-to-many
                let forward = ModelBuilder.relationship(name, from: source, to: destination, toMany: true)
                ModelBuilder.inverse(
                    forward,
                    ModelBuilder.relationship(
                        freeName(for: [destination], random: &random), from: destination, to: source))
            case 2:  // ordered one-to-many
                let forward = ModelBuilder.relationship(
                    name, from: source, to: destination, toMany: true, isOrdered: true)
                ModelBuilder.inverse(
                    forward,
                    ModelBuilder.relationship(
                        freeName(for: [destination], random: &random), from: destination, to: source))
            case 3:  // many-to-many
                let forward = ModelBuilder.relationship(name, from: source, to: destination, toMany: true)
                let back = ModelBuilder.relationship(
                    freeName(for: [destination], random: &random), from: destination, to: source, toMany: true)
                ModelBuilder.inverse(forward, back)
            case 4:  // to-many without inverse
                ModelBuilder.relationship(
                    name, from: source, to: destination, toMany: true, isOrdered: Bool.random(using: &random))
                withoutInverse.append(destination)
            default:  // to-one without inverse
                ModelBuilder.relationship(name, from: source, to: destination)
                withoutInverse.append(destination)
            }
        }
        self.entities = entities
        referencedWithoutInverse = withoutInverse
        model = ModelBuilder.model(entities)
    }

    /// A description of the model, for a failure report.
    var description: String {
        entities.map { entity in
            let parent = entity.superentity.map { " : \($0.name!)" } ?? ""
            let properties = entity.ownProperties.map { property -> String in
                if let attribute = property as? AttributeDescription {
                    return "\(attribute.name) \(attribute.attributeType)"
                }
                let relationship = property as! RelationshipDescription
                let shape = relationship.isToMany ? (relationship.isOrdered ? "->>(ordered)" : "->>") : "->"
                let inverse = relationship.inverseRelationship.map { " inverse \($0.name)" } ?? ""
                return "\(relationship.name) \(shape) \(relationship.destinationEntity!.name!)\(inverse)"
            }
            return
                "\(entity.isAbstract ? "abstract " : "")\(entity.name!)\(parent) { \(properties.joined(separator: "; ")) }"
        }.joined(separator: "\n")
    }

    /// The concrete entities.
    var concreteEntities: [EntityDescription] { entities.filter { !$0.isAbstract } }

    /// A random value of an attribute's type.
    static func value(for attribute: AttributeDescription, random: inout SplitMix64) -> Any? {
        if Int.random(in: 0..<8, using: &random) == 0 { return nil }
        switch attribute.attributeType {
        case .integer16AttributeType: return Int16.random(in: .min ... .max, using: &random)
        case .integer32AttributeType: return Int32.random(in: .min ... .max, using: &random)
        case .integer64AttributeType: return Int64.random(in: .min ... .max, using: &random)
        case .doubleAttributeType: return Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 8
        case .booleanAttributeType: return Bool.random(using: &random)
        default: return "s\(Int.random(in: 0..<1_000, using: &random))"
        }
    }

    /// Sets a random value (or random related objects among `objects`) for `property` of `object`.
    static func assign(
        _ property: PropertyDescription, of object: ManagedObject, among objects: [ManagedObject],
        random: inout SplitMix64
    ) throws {
        if let attribute = property as? AttributeDescription {
            guard attribute.name != "uid" else { return }
            object.setValue(value(for: attribute, random: &random), forKey: attribute.name)
            return
        }
        let relationship = property as! RelationshipDescription
        let candidates = objects.filter { $0.entity.isKindOf(entity: relationship.destinationEntity!) }
        if !relationship.isToMany {
            object.setValue(
                Bool.random(using: &random) ? candidates.randomElement(using: &random) : nil, forKey: relationship.name)
            return
        }
        let chosen = Array(candidates.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)))
        object.setValue(relationship.isOrdered ? chosen as Any : Set(chosen) as Any, forKey: relationship.name)
    }

    /// Every object's entity and property values, by `uid`: attributes with their type, related
    /// objects as `Entity#uid` (sorted for a set, in order for an ordered relationship), each
    /// read through the object (faults fire, to-many relationships load from the store).
    static func snapshot(_ objects: [ManagedObject]) throws -> [Int64: [String: String]] {
        func name(_ object: ManagedObject) throws -> String {
            "\(object.objectID.entity.name!)#\(object.value(forKey: "uid") as? Int64 ?? -1)"
        }
        var result: [Int64: [String: String]] = [:]
        for object in objects {
            var values = ["entity": object.entity.name!, "id": object.objectID.entity.name!]
            for property in object.entity.properties {
                let value = object.value(forKey: property.name)
                switch value {
                case nil: values[property.name] = "nil"
                case let related as ManagedObject: values[property.name] = try name(related)
                case let ordered as [ManagedObject]:
                    values[property.name] = try ordered.map(name).joined(separator: ",")
                case let set as Set<ManagedObject>:
                    values[property.name] = try set.map(name).sorted().joined(separator: ",")
                case let some?: values[property.name] = "\(type(of: some)) \(some)"
                }
            }
            result[object.value(forKey: "uid") as! Int64] = values
        }
        return result
    }

    /// Where two snapshots differ, one line per object and key (at most 20 lines).
    static func differences(expected: [Int64: [String: String]], actual: [Int64: [String: String]]) -> [String] {
        var lines: [String] = []
        for uid in Set(expected.keys).union(actual.keys).sorted() {
            guard let wanted = expected[uid], let found = actual[uid] else {
                lines.append(
                    "object \(uid): expected \(expected[uid]?.description ?? "none"), found \(actual[uid]?.description ?? "none")"
                )
                continue
            }
            for key in Set(wanted.keys).union(found.keys).sorted() where wanted[key] != found[key] {
                lines.append(
                    "object \(uid) (\(wanted["entity"] ?? "?")).\(key): expected \(wanted[key] ?? "none"), found \(found[key] ?? "none")"
                )
            }
        }
        return Array(lines.prefix(20))
    }
}
