import Logging

/// Xcode's composite attributes: `<attribute attributeType="Composite" composite="Name"/>` with
/// the model's `<composite name="Name">` (or `<compositeAttribute>`) holding the elements, or
/// the elements written inside the attribute (`<element>` or `<attribute>` children).
extension ModelFileReader {
    /// A composite attribute with the elements written inside `element`; those of a model-level
    /// definition are added by ``linkCompositeAttributes(of:entity:root:)``.
    ///
    /// - Throws: ``ModelError`` for an invalid element.
    func compositeAttribute(
        _ element: ModelXMLElement, name: String, entity: String
    ) throws -> CompositeAttributeDescription {
        let attribute = CompositeAttributeDescription()
        attribute.elements = try compositeElements(
            of: element, owner: "\(entity).\(name)", entity: entity, root: nil, seen: [])
        return attribute
    }

    /// Sets the elements of the entity's composite attributes that name a model-level
    /// definition, and the default value made of the elements' defaults.
    ///
    /// - Throws: ``ModelError`` when the definition does not exist or is recursive.
    func linkCompositeAttributes(of element: ModelXMLElement, entity: EntityDescription, root: ModelXMLElement) throws {
        for child in element.children(named: "attribute") {
            guard
                let composite = entity.ownProperties.first(where: { $0.name == child["name"] })
                    as? CompositeAttributeDescription
            else { continue }
            try resolve(
                composite, from: child, owner: "\(entity.entityName).\(composite.name)", entity: entity.entityName,
                root: root, seen: [])
        }
    }

    /// Fills a composite's elements from the definition its element names, recursively.
    private func resolve(
        _ composite: CompositeAttributeDescription, from element: ModelXMLElement, owner: String, entity: String,
        root: ModelXMLElement, seen: Set<String>
    ) throws {
        if composite.elements.isEmpty, let definitionName = element["composite"], !definitionName.isEmpty {
            guard !seen.contains(definitionName) else {
                throw error(
                    .invalidModel, "composite attribute \(owner) contains composite \(definitionName) within itself",
                    at: element, entity: entity, property: composite.name)
            }
            guard
                let definition = (root.children(named: "composite") + root.children(named: "compositeAttribute"))
                    .first(where: { $0["name"] == definitionName })
            else {
                throw error(
                    .missingEntity,
                    "composite attribute \(owner) names composite \(definitionName), which the model does not define",
                    at: element, entity: entity, property: composite.name)
            }
            composite.elements = try compositeElements(
                of: definition, owner: owner, entity: entity, root: root, seen: seen.union([definitionName]))
        } else {
            for (part, child) in zip(
                composite.elements, element.children.filter { $0.name == "attribute" || $0.name == "element" })
            {
                guard let nested = part as? CompositeAttributeDescription else { continue }
                try resolve(
                    nested, from: child, owner: "\(owner).\(nested.name)", entity: entity, root: root, seen: seen)
            }
        }
        if composite.elements.isEmpty {
            // Xcode 15's beta wrote composites with no elements; Core Data loads them, and
            // their value is an empty dictionary.
            modelLogger.warning("composite attribute \(owner) has no elements (line \(element.line))")
        }
        if composite.defaultValue == nil {
            var defaults: [String: Any] = [:]
            for part in composite.elements { defaults[part.name] = part.defaultValue }
            if !defaults.isEmpty { composite.defaultValue = defaults }
        }
    }

    /// The elements written as `<element>` or `<attribute>` children of `element`.
    private func compositeElements(
        of element: ModelXMLElement, owner: String, entity: String, root: ModelXMLElement?, seen: Set<String>
    ) throws -> [AttributeDescription] {
        var elements: [AttributeDescription] = []
        for child in element.children where child.name == "attribute" || child.name == "element" {
            let name = try required(
                "name", of: child, what: "an element of composite attribute \(owner)", entity: entity)
            guard !elements.contains(where: { $0.name == name }) else {
                throw error(
                    .duplicateName, "composite attribute \(owner) has two elements named \(name)",
                    at: child, entity: entity, property: name)
            }
            let part = try readAttribute(child, name: name, entity: entity)
            part.isOptional = try flag("optional", of: child, default: false, entity: entity)
            part.userInfo = try userInfo(of: child, entity: entity, property: name)
            if let nested = part as? CompositeAttributeDescription, let root {
                try resolve(nested, from: child, owner: "\(owner).\(name)", entity: entity, root: root, seen: seen)
            }
            elements.append(part)
        }
        return elements
    }
}
