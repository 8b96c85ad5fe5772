import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Computes the derived attributes (``DerivedAttributeDescription``) of the objects a save
    /// writes, as Core Data's store does on save: those of every inserted and updated object,
    /// and those of the objects related to a changed or deleted object through a relationship a
    /// derivation reads (a department's `employees.@count` when an employee moves). `now()`
    /// is the date of the save, for objects changed by the application only.
    ///
    /// An object whose derived value changes is updated and saved with the others.
    ///
    /// - Throws: what reading a related object's to-many relationship throws.
    func computeDerivedAttributes() throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel else { return }
        let readRelationships = Self.relationshipsReadByDerivations(in: model)
        guard !readRelationships.isEmpty || model.entities.contains(where: Self.hasDerivedAttributes) else { return }
        let changed = Array(insertedSet) + Array(updatedSet)
        let changedIDs = Set(changed.map(ObjectIdentifier.init))
        var targets = OrderedSet(changed.map(ObjectIdentifier.init))
        var objects = Dictionary(changed.map { (ObjectIdentifier($0), $0) }, uniquingKeysWith: { first, _ in first })
        if !readRelationships.isEmpty {
            for object in changed + Array(deletedSet) {
                for (slot, property) in object.runtime.properties.enumerated() {
                    guard let relationship = property as? RelationshipDescription,
                        let inverse = relationship.inverseRelationship,
                        readRelationships.contains(ObjectIdentifier(inverse))
                    else { continue }
                    if object.isLoaded, !object.isDeleted { try object.loadToMany(slot) }
                    for id in Self.relatedIDs(object.values.indices.contains(slot) ? object.values[slot] : nil)
                        + Self.relatedIDs(object.committed?[slot])
                    {
                        let related = self.object(with: id)
                        guard !related.isDeleted, objects[ObjectIdentifier(related)] == nil else { continue }
                        objects[ObjectIdentifier(related)] = related
                        targets.append(ObjectIdentifier(related))
                    }
                }
            }
        }
        let now = Date()
        for identity in targets {
            guard let object = objects[identity], !object.isDeleted, Self.hasDerivedAttributes(object.entity) else {
                continue
            }
            do {
                try object.fireFault()
            } catch  where !changedIDs.contains(identity) {
                continue  // a related object another context deleted: nothing of it to save
            }
            for (slot, property) in object.runtime.properties.enumerated() {
                guard let derived = property as? DerivedAttributeDescription,
                    let expression = derived.derivationExpression
                else { continue }
                let value: Any?
                if case .function("now", _) = expression {
                    guard changedIDs.contains(identity) else { continue }
                    value = now
                } else {
                    value = Self.storedForm(expression.expressionValue(with: object), of: derived)
                }
                guard !Self.isSame(object.values[slot], value) else { continue }
                object.values[slot] = value
                object.noteChange(slot)
            }
        }
    }

    /// Whether `entity` (with its inherited properties) has a derived attribute.
    private static func hasDerivedAttributes(_ entity: EntityDescription) -> Bool {
        entity.properties.contains { $0 is DerivedAttributeDescription }
    }

    /// The relationships whose objects some derivation of `model` reads: the first key of a key
    /// path of a derived attribute's expression.
    private static func relationshipsReadByDerivations(in model: ManagedObjectModel) -> Set<ObjectIdentifier> {
        var result = Set<ObjectIdentifier>()
        for entity in model.entities {
            for case let derived as DerivedAttributeDescription in entity.properties {
                for path in derived.derivationExpression?.keyPaths ?? [] {
                    guard let first = path.split(separator: ".").first,
                        let relationship = entity.relationshipsByName[String(first)]
                    else { continue }
                    result.insert(ObjectIdentifier(relationship))
                }
            }
        }
        return result
    }

    /// The object IDs a relationship slot holds.
    private static func relatedIDs(_ value: Any?) -> [ManagedObjectID] {
        switch value {
        case let id as ManagedObjectID: [id]
        case let ids as OrderedSet<ManagedObjectID>: Array(ids)
        default: []
        }
    }

    /// Whether two attribute values are equal (two `nil`s included).
    private static func isSame(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (lhs?, rhs?): type(of: lhs) == type(of: rhs) && FetchValue.equal(lhs, rhs)
        default: false
        }
    }

    /// A computed value as the attribute holds it: numbers converted to the attribute's type
    /// (fractions of an average dropped for integer attributes, as SQL does), `nil` for a value
    /// that does not fit.
    private static func storedForm(_ value: Any?, of attribute: AttributeDescription) -> Any? {
        guard let value = FetchValue.unwrap(value) else { return nil }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            let whole =
                ValueConversion.integer(value)
                ?? FetchValue.number(value).flatMap { $0.isFinite ? Int64(exactly: $0.rounded(.towardZero)) : nil }
            return whole.flatMap { ModelValueText.fit($0, to: attribute.attributeType) }
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return decimal }
            if let integer = ValueConversion.integer(value) { return Decimal(integer) }
            return FetchValue.number(value).map { Decimal($0) }
        case .doubleAttributeType: return FetchValue.number(value)
        case .floatAttributeType: return FetchValue.number(value).map { Float($0) }
        default: return value
        }
    }
}
