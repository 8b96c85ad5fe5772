/// Xcode's legacy `<compoundIndexes>`, read as fetch indexes.
extension ModelFileReader {
    /// The fetch indexes of an entity's `<compoundIndexes><compoundIndex><index value="a"/>…`
    /// elements, as Core Data builds them: one ascending binary fetch index per compound index,
    /// named `compoundIndex<N>` (N counting from 1, skipping names `existing` already uses).
    ///
    /// - Throws: ``ModelError`` when a compound index names no property, or one the entity
    ///   (inherited properties included) does not have.
    func compoundIndexes(
        of element: ModelXMLElement, entity: EntityDescription, existing: [FetchIndexDescription]
    ) throws -> [FetchIndexDescription] {
        let properties = entity.propertiesByName
        var names = Set(existing.map(\.name))
        var result: [FetchIndexDescription] = []
        for group in element.children(named: "compoundIndexes") {
            for compound in group.children(named: "compoundIndex") {
                var elements: [FetchIndexElementDescription] = []
                for part in compound.children(named: "index") {
                    let name = try required(
                        "value", of: part, what: "an element of a compound index of entity \(entity.entityName)",
                        entity: entity.entityName)
                    guard let property = properties[name] else {
                        throw error(
                            .missingProperty,
                            "a compound index of entity \(entity.entityName) names property \(name), which entity \(entity.entityName) does not have",
                            at: part, entity: entity.entityName, property: name)
                    }
                    elements.append(FetchIndexElementDescription(property: property, collationType: .binary))
                }
                guard !elements.isEmpty else {
                    throw error(
                        .invalidModel, "a compound index of entity \(entity.entityName) names no property",
                        at: compound, entity: entity.entityName)
                }
                var number = 1
                while names.contains("compoundIndex\(number)") { number += 1 }
                names.insert("compoundIndex\(number)")
                result.append(FetchIndexDescription(name: "compoundIndex\(number)", elements: elements))
            }
        }
        return result
    }
}
