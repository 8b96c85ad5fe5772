import Foundation
import Logging

/// Turns the XML tree of an Xcode model's `contents` file into a ``ManagedObjectModel``.
///
/// Every check that can fail names the entity, the property and the line, so a hand-edited or
/// damaged model file gets an error that says where to look.
struct ModelFileReader {
    /// The file's path, for errors.
    let path: String

    /// One `<entity>` element and the entity made of it.
    private struct EntityElement {
        var element: ModelXMLElement
        var entity: EntityDescription
    }

    /// Fills `model` from the root element of a model file.
    ///
    /// - Throws: ``ModelError`` on the first problem found.
    func read(_ root: ModelXMLElement, into model: ManagedObjectModel) throws {
        guard root.name == "model" else {
            throw error(
                .invalidModel, "the root element is <\(root.name)>, not <model>: this is not a Core Data model",
                at: root)
        }

        // Entities, in file order, with unique names.
        var entityElements: [EntityElement] = []
        var byName: [String: EntityDescription] = [:]
        for element in root.children(named: "entity") {
            let name = try required("name", of: element, what: "an entity")
            guard byName[name] == nil else {
                throw error(.duplicateName, "two entities are named \(name)", at: element, entity: name)
            }
            let entity = EntityDescription()
            entity.entityName = name
            if let className = element["representedClassName"], !className.isEmpty {
                entity.managedObjectClassName = className
            }
            entity.isAbstract = try flag("isAbstract", of: element, default: false)
            entity.versionHashModifier = element["versionHashModifier"]
            entity.renamingIdentifier = element["elementID"] ?? element["renamingIdentifier"]
            entity.userInfo = try userInfo(of: element, entity: name, property: nil)
            byName[name] = entity
            entityElements.append(EntityElement(element: element, entity: entity))
        }

        try linkParents(entityElements, byName: byName)

        // Own properties, then the name clashes inheritance brings.
        for item in entityElements {
            try readProperties(of: item)
        }
        for item in entityElements {
            var seen: [String: EntityDescription] = [:]
            for ancestor in item.entity.inheritanceChain {
                for property in ancestor.ownProperties {
                    if let first = seen[property.name] {
                        throw error(
                            .duplicateName,
                            "entity \(item.entity.entityName) inherits property \(property.name) from \(first.entityName) and \(ancestor.entityName) defines it again",
                            at: item.element, entity: item.entity.entityName, property: property.name)
                    }
                    seen[property.name] = ancestor
                }
            }
        }

        for item in entityElements {
            try linkRelationships(of: item, byName: byName)
            try linkFetchedProperties(of: item.element, entity: item.entity, byName: byName)
            try linkCompositeAttributes(of: item.element, entity: item.entity, root: root)
        }
        for item in entityElements {
            try checkInverses(of: item)
            try readIndexes(of: item)
            try readUniquenessConstraints(of: item)
        }

        model.entities = entityElements.map(\.entity)
        for element in root.children(named: "configuration") {
            let name = try required("name", of: element, what: "a configuration")
            var members: [EntityDescription] = []
            for member in element.children(named: "memberEntity") {
                let entityName = try required("name", of: member, what: "a member entity of configuration \(name)")
                guard let entity = byName[entityName] else {
                    throw error(
                        .missingEntity, "configuration \(name) lists entity \(entityName), which does not exist",
                        at: member, entity: entityName)
                }
                members.append(entity)
            }
            model.setEntities(members, forConfigurationName: name)
        }
        try readFetchRequestTemplates(of: root, into: model, byName: byName)
        if let identifier = root["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            model.versionIdentifiers = [identifier]
        }

        do {
            try model.validate()
        } catch var failure as ModelError {
            failure.path = path
            throw failure
        }
    }

    // MARK: - Entities

    /// Checks parent names and cycles, then sets every parent's sub-entities (in file order).
    private func linkParents(_ items: [EntityElement], byName: [String: EntityDescription]) throws {
        var parentName: [String: String] = [:]
        for item in items {
            guard let parent = item.element["parentEntity"], !parent.isEmpty else { continue }
            guard byName[parent] != nil else {
                throw error(
                    .missingEntity,
                    "entity \(item.entity.entityName) has parent entity \(parent), which does not exist",
                    at: item.element, entity: item.entity.entityName)
            }
            parentName[item.entity.entityName] = parent
        }
        for item in items {
            var chain = [item.entity.entityName]
            var current = item.entity.entityName
            while let parent = parentName[current] {
                if let start = chain.firstIndex(of: parent) {
                    let cycle = (chain[start...] + [parent]).joined(separator: " -> ")
                    throw error(
                        .inheritanceCycle, "the parent entities of \(item.entity.entityName) form a cycle: \(cycle)",
                        at: item.element, entity: item.entity.entityName)
                }
                chain.append(parent)
                current = parent
            }
        }
        for item in items {
            let children = items.filter { parentName[$0.entity.entityName] == item.entity.entityName }.map(\.entity)
            if !children.isEmpty { item.entity.subentities = children }
        }
    }

    /// Reads the attributes and relationships of an entity, in file order.
    private func readProperties(of item: EntityElement) throws {
        let entityName = item.entity.entityName
        var properties: [PropertyDescription] = []
        var names = Set<String>()
        var legacyIndexes: [FetchIndexDescription] = []
        for element in item.element.children
        where ["attribute", "relationship", "fetchedProperty"].contains(element.name) {
            let name = try required(
                "name", of: element, what: "an \(element.name) of entity \(entityName)", entity: entityName)
            guard names.insert(name).inserted else {
                throw error(
                    .duplicateName, "entity \(entityName) has two properties named \(name)",
                    at: element, entity: entityName, property: name)
            }
            let property: PropertyDescription
            if element.name == "attribute" {
                let attribute = try readAttribute(element, name: name, entity: entityName)
                if try flag("indexed", of: element, default: false, entity: entityName) {
                    legacyIndexes.append(
                        FetchIndexDescription(
                            name: "\(name)Index",
                            elements: [FetchIndexElementDescription(property: attribute, collationType: .binary)]))
                }
                property = attribute
            } else if element.name == "fetchedProperty" {
                property = FetchedPropertyDescription()
                property.name = name
            } else {
                property = try readRelationship(element, name: name, entity: entityName)
            }
            property.isOptional = try flag("optional", of: element, default: false, entity: entityName)
            property.isTransient = try flag("transient", of: element, default: false, entity: entityName)
            property.versionHashModifier = element["versionHashModifier"]
            property.renamingIdentifier = element["elementID"] ?? element["renamingIdentifier"]
            property.userInfo = try userInfo(of: element, entity: entityName, property: name)
            properties.append(property)
        }
        item.entity.properties = properties
        item.entity.indexes = legacyIndexes
    }

    // MARK: - Attributes

    /// Reads one `<attribute>`.
    func readAttribute(
        _ element: ModelXMLElement, name: String, entity: String
    ) throws -> AttributeDescription {
        let attribute =
            if try flag("derived", of: element, default: false, entity: entity) {
                try derivedAttribute(element, name: name, entity: entity)
            } else if element["attributeType"] == AttributeType.compositeAttributeType.xmlName {
                try compositeAttribute(element, name: name, entity: entity)
            } else {
                AttributeDescription()
            }
        attribute.name = name
        let transient = try flag("transient", of: element, default: false, entity: entity)
        if let typeName = element["attributeType"] {
            guard let type = AttributeType(xmlName: typeName) else {
                let known = AttributeType.allCases.map { "\"\($0.xmlName)\"" }.joined(separator: ", ")
                throw error(
                    .unknownAttributeType,
                    "attribute \(entity).\(name) has the unknown attributeType \"\(typeName)\" (known: \(known))",
                    at: element, entity: entity, property: name)
            }
            attribute.attributeType = type
        } else if !transient {
            throw error(
                .unknownAttributeType, "attribute \(entity).\(name) has no attributeType",
                at: element, entity: entity, property: name)
        }
        let type = attribute.attributeType
        attribute.allowsExternalBinaryDataStorage = try flag(
            "allowsExternalBinaryDataStorage", of: element, default: false, entity: entity)
        attribute.preservesValueInHistoryOnDeletion = try flag(
            "preserveAfterDeletion", of: element, default: false, entity: entity)
        attribute.valueTransformerName = element["valueTransformerName"]
        if let className = element["customClassName"], !className.isEmpty {
            attribute.attributeValueClassName = className
        }
        if let pattern = element["regularExpressionString"] {
            guard type == .stringAttributeType else {
                throw error(
                    .invalidValue,
                    "attribute \(entity).\(name) has a regular expression but is of type \(type.xmlName), not String",
                    at: element, entity: entity, property: name)
            }
            attribute.regularExpressionString = pattern
        }

        let defaultText =
            type == .dateAttributeType
            ? element["defaultDateTimeInterval"] ?? element["defaultValueString"] : element["defaultValueString"]
        if let defaultText {
            // Core Data loads a default value that is not one of the attribute's type (a UUID
            // attribute's "abc") as no default value at all.
            do {
                attribute.defaultValue = try convert(
                    defaultText, to: type, what: "default value", of: element, entity: entity, property: name)
            } catch let refused as ModelError {
                modelLogger.warning("\(refused.message); the attribute has no default value, as in Core Data")
            }
        }
        attribute.minValue = try limit("min", of: element, type: type, entity: entity, property: name)
        attribute.maxValue = try limit("max", of: element, type: type, entity: entity, property: name)
        return attribute
    }

    /// Reads `minValueString` / `maxValueString` (or a date attribute's `minDateTimeInterval` /
    /// `maxDateTimeInterval`): a number of the attribute's type, a `Date`, or a length.
    private func limit(
        _ kind: String, of element: ModelXMLElement, type: AttributeType, entity: String, property: String
    ) throws -> Any? {
        let what = "\(kind)imum"
        if type == .dateAttributeType, let interval = element["\(kind)DateTimeInterval"] {
            return try convert(interval, to: type, what: what, of: element, entity: entity, property: property)
        }
        guard let text = element["\(kind)ValueString"] else { return nil }
        switch type {
        case .stringAttributeType, .binaryDataAttributeType:
            guard let length = Int(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw error(
                    .invalidValue,
                    "attribute \(entity).\(property) has the \(what) length \"\(text)\", which is not a length",
                    at: element, entity: entity, property: property)
            }
            return length
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
            .doubleAttributeType, .floatAttributeType, .dateAttributeType:
            return try convert(text, to: type, what: what, of: element, entity: entity, property: property)
        default:
            throw error(
                .invalidValue, "attribute \(entity).\(property) of type \(type.xmlName) cannot have a \(what)",
                at: element, entity: entity, property: property)
        }
    }

    /// Converts the text of a default value or limit to the attribute's type.
    private func convert(
        _ text: String,
        to type: AttributeType,
        what: String,
        of element: ModelXMLElement,
        entity: String,
        property: String
    ) throws -> Any {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let value: Any?
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = ModelValueText.integer(trimmed) else {
                if ModelValueText.double(trimmed) != nil {
                    throw error(
                        .invalidValue,
                        "attribute \(entity).\(property) of type \(type.xmlName) has the \(what) \"\(text)\", which is not a whole number",
                        at: element, entity: entity, property: property)
                }
                value = nil
                break
            }
            value = ModelValueText.fit(number, to: type)
        case .decimalAttributeType: value = ModelValueText.decimal(trimmed)
        case .doubleAttributeType: value = ModelValueText.double(trimmed)
        case .floatAttributeType: value = Float(trimmed) ?? ModelValueText.double(trimmed).map { Float($0) }
        case .stringAttributeType: value = text
        case .booleanAttributeType: value = ModelValueText.boolean(trimmed)
        case .dateAttributeType: value = TimeInterval(trimmed).map { Date(timeIntervalSinceReferenceDate: $0) }
        case .UUIDAttributeType: value = UUID(uuidString: trimmed)
        case .URIAttributeType: value = trimmed.isEmpty ? nil : URL(string: trimmed)
        case .undefinedAttributeType, .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType,
            .compositeAttributeType:
            throw error(
                .invalidValue, "attribute \(entity).\(property) of type \(type.xmlName) cannot have a \(what)",
                at: element, entity: entity, property: property)
        }
        guard let value else {
            throw error(
                .invalidValue,
                "attribute \(entity).\(property) has the \(what) \"\(text)\", which is not a valid \(type.xmlName)",
                at: element, entity: entity, property: property)
        }
        return value
    }

    // MARK: - Relationships

    /// Reads one `<relationship>`; destination and inverse are linked later.
    private func readRelationship(
        _ element: ModelXMLElement, name: String, entity: String
    ) throws -> RelationshipDescription {
        let relationship = RelationshipDescription()
        relationship.name = name
        let toMany = try flag("toMany", of: element, default: false, entity: entity)
        relationship.minCount = try count("minCount", of: element, default: 0, entity: entity, property: name)
        relationship.maxCount = try count(
            "maxCount", of: element, default: toMany ? 0 : 1, entity: entity, property: name)
        if !toMany && relationship.maxCount != 1 {
            throw error(
                .invalidValue, "relationship \(entity).\(name) is to-one but has maxCount \(relationship.maxCount)",
                at: element, entity: entity, property: name)
        }
        if relationship.maxCount > 0 && relationship.minCount > relationship.maxCount {
            throw error(
                .invalidValue,
                "relationship \(entity).\(name) has minCount \(relationship.minCount) above maxCount \(relationship.maxCount)",
                at: element, entity: entity, property: name)
        }
        relationship.isOrdered = try flag("ordered", of: element, default: false, entity: entity)
        if let ruleName = element["deletionRule"] {
            guard let rule = DeleteRule(xmlName: ruleName) else {
                throw error(
                    .invalidValue,
                    "relationship \(entity).\(name) has the unknown deletionRule \"\(ruleName)\" (known: \"Nullify\", \"Cascade\", \"Deny\", \"No Action\")",
                    at: element, entity: entity, property: name)
            }
            relationship.deleteRule = rule
        }
        return relationship
    }

    /// Reads a non-negative count.
    private func count(
        _ key: String, of element: ModelXMLElement, default defaultValue: Int, entity: String, property: String
    ) throws -> Int {
        guard let text = element[key] else { return defaultValue }
        guard let value = Int(text), value >= 0 else {
            throw error(
                .invalidValue, "relationship \(entity).\(property) has \(key) \"\(text)\", which is not a count",
                at: element, entity: entity, property: property)
        }
        return value
    }

    /// Sets the destination and inverse of every relationship of an entity.
    private func linkRelationships(of item: EntityElement, byName: [String: EntityDescription]) throws {
        let entityName = item.entity.entityName
        for element in item.element.children(named: "relationship") {
            let name = try required(
                "name", of: element, what: "a relationship of entity \(entityName)", entity: entityName)
            guard
                let relationship = item.entity.ownProperties.first(where: { $0.name == name })
                    as? RelationshipDescription
            else { continue }
            guard let destinationName = element["destinationEntity"], !destinationName.isEmpty else {
                throw error(
                    .missingEntity, "relationship \(entityName).\(name) has no destinationEntity",
                    at: element, entity: entityName, property: name)
            }
            guard let destination = byName[destinationName] else {
                throw error(
                    .missingEntity,
                    "relationship \(entityName).\(name) has destination entity \(destinationName), which does not exist",
                    at: element, entity: entityName, property: name)
            }
            relationship.destinationEntity = destination
            guard let inverseName = element["inverseName"], !inverseName.isEmpty else { continue }
            var inverseOwner = destination
            if let inverseEntityName = element["inverseEntity"], !inverseEntityName.isEmpty {
                guard let owner = byName[inverseEntityName] else {
                    throw error(
                        .missingEntity,
                        "relationship \(entityName).\(name) has inverse entity \(inverseEntityName), which does not exist",
                        at: element, entity: entityName, property: name)
                }
                guard destination.isKindOf(entity: owner) else {
                    throw error(
                        .invalidModel,
                        "relationship \(entityName).\(name) has inverse entity \(inverseEntityName), which is not its destination \(destinationName)",
                        at: element, entity: entityName, property: name)
                }
                inverseOwner = owner
            }
            guard let property = inverseOwner.propertiesByName[inverseName] else {
                throw error(
                    .missingProperty,
                    "relationship \(entityName).\(name) has inverse \(inverseOwner.entityName).\(inverseName), which does not exist",
                    at: element, entity: entityName, property: name)
            }
            guard let inverse = property as? RelationshipDescription else {
                throw error(
                    .invalidModel,
                    "relationship \(entityName).\(name) has inverse \(inverseOwner.entityName).\(inverseName), which is an attribute, not a relationship",
                    at: element, entity: entityName, property: name)
            }
            relationship.inverseRelationship = inverse
        }
    }

    /// Checks that each relationship's inverse points back at it (or at nothing) and at an
    /// entity of its hierarchy.
    private func checkInverses(of item: EntityElement) throws {
        let entity = item.entity
        for element in item.element.children(named: "relationship") {
            guard
                let relationship = entity.ownProperties.first(where: { $0.name == element["name"] })
                    as? RelationshipDescription,
                let inverse = relationship.inverseRelationship
            else { continue }
            if let back = inverse.destinationEntity, !(back.isKindOf(entity: entity) || entity.isKindOf(entity: back)) {
                throw error(
                    .invalidModel,
                    "relationship \(entity.entityName).\(relationship.name) has inverse \(inverse.qualifiedName), whose destination \(back.entityName) is not \(entity.entityName) or related to it",
                    at: element, entity: entity.entityName, property: relationship.name)
            }
            if let other = inverse.inverseRelationship, other !== relationship {
                // Core Data loads such a model: each relationship keeps the inverse its own
                // element names, and a change maintains that inverse only.
                modelLogger.warning(
                    "relationship \(entity.entityName).\(relationship.name) has inverse \(inverse.qualifiedName), whose own inverse is \(other.qualifiedName) (line \(element.line)): the two sides disagree; each keeps its own"
                )
            }
        }
    }

    // MARK: - Indexes and constraints

    /// Reads the `<fetchIndex>` elements of an entity (after any legacy `indexed` ones).
    private func readIndexes(of item: EntityElement) throws {
        let entityName = item.entity.entityName
        let properties = item.entity.propertiesByName
        var indexes = item.entity.indexes
        for element in item.element.children(named: "fetchIndex") {
            let name = try required(
                "name", of: element, what: "a fetch index of entity \(entityName)", entity: entityName)
            guard !indexes.contains(where: { $0.name == name }) else {
                throw error(
                    .duplicateName, "entity \(entityName) has two fetch indexes named \(name)",
                    at: element, entity: entityName)
            }
            var elements: [FetchIndexElementDescription] = []
            for part in element.children(named: "fetchIndexElement") {
                guard let propertyName = part["property"], !propertyName.isEmpty else {
                    throw error(
                        .invalidModel,
                        "an element of fetch index \(entityName).\(name) names no property (expression elements are not supported)",
                        at: part, entity: entityName)
                }
                guard let property = properties[propertyName] else {
                    throw error(
                        .missingProperty,
                        "fetch index \(entityName).\(name) names property \(propertyName), which entity \(entityName) does not have",
                        at: part, entity: entityName, property: propertyName)
                }
                var collation = FetchIndexElementType.binary
                if let typeName = part["type"] {
                    guard let type = FetchIndexElementType(xmlName: typeName) else {
                        throw error(
                            .invalidValue,
                            "fetch index \(entityName).\(name) has the unknown element type \"\(typeName)\" (known: \"Binary\", \"RTree\")",
                            at: part, entity: entityName, property: propertyName)
                    }
                    collation = type
                }
                let indexElement = FetchIndexElementDescription(property: property, collationType: collation)
                switch part["order"] ?? "ascending" {
                case "ascending": indexElement.isAscending = true
                case "descending": indexElement.isAscending = false
                case let order:
                    throw error(
                        .invalidValue,
                        "fetch index \(entityName).\(name) has the unknown order \"\(order)\" (known: \"ascending\", \"descending\")",
                        at: part, entity: entityName, property: propertyName)
                }
                elements.append(indexElement)
            }
            guard !elements.isEmpty else {
                throw error(
                    .invalidModel, "fetch index \(entityName).\(name) has no elements",
                    at: element, entity: entityName)
            }
            indexes.append(FetchIndexDescription(name: name, elements: elements))
        }
        indexes += try compoundIndexes(of: item.element, entity: item.entity, existing: indexes)
        item.entity.indexes = indexes
    }

    /// Reads the `<uniquenessConstraints>` of an entity as arrays of property names.
    private func readUniquenessConstraints(of item: EntityElement) throws {
        let entityName = item.entity.entityName
        let properties = item.entity.propertiesByName
        var constraints: [[Any]] = []
        for group in item.element.children(named: "uniquenessConstraints") {
            for element in group.children(named: "uniquenessConstraint") {
                var names: [Any] = []
                for part in element.children(named: "constraint") {
                    let name = try required(
                        "value", of: part, what: "a uniqueness constraint of entity \(entityName)", entity: entityName)
                    guard properties[name] != nil else {
                        throw error(
                            .missingProperty,
                            "a uniqueness constraint of entity \(entityName) names property \(name), which entity \(entityName) does not have",
                            at: part, entity: entityName, property: name)
                    }
                    names.append(name)
                }
                guard !names.isEmpty else {
                    throw error(
                        .invalidModel, "a uniqueness constraint of entity \(entityName) names no property",
                        at: element, entity: entityName)
                }
                constraints.append(names)
            }
        }
        item.entity.uniquenessConstraints = constraints
    }

    // MARK: - Helpers

    /// The `<userInfo>` entries of an element.
    func userInfo(of element: ModelXMLElement, entity: String, property: String?) throws -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = [:]
        for group in element.children(named: "userInfo") {
            for entry in group.children(named: "entry") {
                let owner = property.map { "\(entity).\($0)" } ?? entity
                let key = try required(
                    "key", of: entry, what: "a userInfo entry of \(owner)", entity: entity, property: property)
                info[key] = entry["value"] ?? ""
            }
        }
        return info
    }

    /// A `YES`/`NO` XML attribute.
    ///
    /// - Parameter entity: the entity `element` belongs to, when `element` is a property.
    func flag(
        _ key: String, of element: ModelXMLElement, default defaultValue: Bool, entity: String? = nil
    ) throws -> Bool {
        guard let text = element[key] else { return defaultValue }
        switch text {
        case "YES", "yes", "true": return true
        case "NO", "no", "false": return false
        default:
            let name = element["name"] ?? "(unnamed)"
            let owner = entity.map { "\(element.name) \($0).\(name)" } ?? "\(element.name) \(name)"
            throw error(
                .invalidValue, "\(owner) has \(key)=\"\(text)\", expected YES or NO", at: element,
                entity: entity ?? (element.name == "entity" ? name : nil), property: entity == nil ? nil : name)
        }
    }

    /// A required, non-empty XML attribute.
    func required(
        _ key: String, of element: ModelXMLElement, what: String, entity: String? = nil, property: String? = nil
    ) throws -> String {
        guard let value = element[key], !value.isEmpty else {
            throw error(
                .invalidModel, "\(what) (<\(element.name)>) has no \(key)",
                at: element, entity: entity, property: property)
        }
        return value
    }

    /// An error at `element`'s line, with the line in the message.
    func error(
        _ code: ModelError.Code,
        _ message: String,
        at element: ModelXMLElement,
        entity: String? = nil,
        property: String? = nil
    ) -> ModelError {
        ModelError(
            code, "\(message) (line \(element.line))",
            path: path, line: element.line, entityName: entity, propertyName: property)
    }
}
