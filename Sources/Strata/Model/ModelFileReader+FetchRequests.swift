/// The `<fetchRequest>` elements of a model file: the model's fetch request templates and the
/// requests of fetched properties.
extension ModelFileReader {
    /// Sets the fetch request of every `<fetchedProperty>` of an entity.
    ///
    /// - Throws: ``ModelError`` when a fetched property has no `<fetchRequest>`, or it is invalid.
    func linkFetchedProperties(
        of element: ModelXMLElement, entity: EntityDescription, byName: [String: EntityDescription]
    ) throws {
        for child in element.children(named: "fetchedProperty") {
            let name = child["name"] ?? ""
            guard let property = entity.ownProperties.first(where: { $0.name == name }) as? FetchedPropertyDescription
            else { continue }
            guard let requestElement = child.children(named: "fetchRequest").first else {
                throw error(
                    .invalidModel, "fetched property \(entity.entityName).\(name) has no <fetchRequest>",
                    at: child, entity: entity.entityName, property: name)
            }
            let request = try fetchRequest(
                requestElement, byName: byName,
                what: "the fetch request of fetched property \(entity.entityName).\(name)",
                entity: entity.entityName, property: name)
            guard request.resultType == .managedObjectResultType || request.resultType == .managedObjectIDResultType
            else {
                throw error(
                    .invalidValue,
                    "fetched property \(entity.entityName).\(name) asks for \(request.resultType) results; fetched properties return objects or object IDs",
                    at: requestElement, entity: entity.entityName, property: name)
            }
            property.fetchRequest = request
        }
    }

    /// Reads the model's `<fetchRequest>` templates into `model`.
    ///
    /// - Throws: ``ModelError`` for two templates of one name, or an invalid template.
    func readFetchRequestTemplates(
        of root: ModelXMLElement, into model: ManagedObjectModel, byName: [String: EntityDescription]
    ) throws {
        for element in root.children(named: "fetchRequest") {
            let name = try required("name", of: element, what: "a fetch request template")
            guard model.fetchRequestTemplate(forName: name) == nil else {
                throw error(.duplicateName, "two fetch request templates are named \(name)", at: element)
            }
            let request = try fetchRequest(
                element, byName: byName, what: "fetch request template \(name)", entity: nil, property: nil)
            model.setFetchRequestTemplate(request, forName: name)
        }
    }

    /// One `<fetchRequest name= entity= predicateString= fetchLimit= …/>`.
    private func fetchRequest(
        _ element: ModelXMLElement, byName: [String: EntityDescription], what: String, entity owner: String?,
        property: String?
    ) throws -> FetchRequest<FetchRequestResult> {
        let entityName = try required("entity", of: element, what: what, entity: owner, property: property)
        guard let entity = byName[entityName] else {
            throw error(
                .missingEntity, "\(what) fetches entity \(entityName), which does not exist",
                at: element, entity: owner ?? entityName, property: property)
        }
        let request = FetchRequest<FetchRequestResult>(entityName: entityName)
        request.entity = entity
        if let format = element["predicateString"], !format.isEmpty {
            do {
                request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: [])
            } catch {
                throw self.error(
                    .invalidValue, "\(what) has a predicate that does not parse: \(error.message) (\(format))",
                    at: element, entity: owner ?? entityName, property: property)
            }
        }
        func number(_ key: String) throws -> Int? {
            guard let text = element[key] else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw error(
                    .invalidValue, "\(what) has \(key) \"\(text)\", which is not a count",
                    at: element, entity: owner ?? entityName, property: property)
            }
            return value
        }
        request.fetchLimit = try number("fetchLimit") ?? 0
        request.fetchOffset = try number("fetchOffset") ?? 0
        request.fetchBatchSize = try number("fetchBatchSize") ?? 0
        if let code = try number("resultType") {
            let types: [Int: FetchRequestResultType] = [
                0: .managedObjectResultType, 1: .managedObjectIDResultType, 2: .dictionaryResultType,
                4: .countResultType,
            ]
            guard let type = types[code] else {
                throw error(
                    .invalidValue,
                    "\(what) has the unknown resultType \(code) (known: 0 objects, 1 object IDs, 2 dictionaries, 4 count)",
                    at: element, entity: owner ?? entityName, property: property)
            }
            request.resultType = type
        }
        request.includesSubentities = try flag("includeSubentities", of: element, default: true, entity: owner)
        request.includesPropertyValues = try flag("includePropertyValues", of: element, default: true, entity: owner)
        request.includesPendingChanges = try flag("includesPendingChanges", of: element, default: true, entity: owner)
        request.returnsObjectsAsFaults = try flag("returnObjectsAsFaults", of: element, default: true, entity: owner)
        request.returnsDistinctResults = try flag("returnDistinctResults", of: element, default: false, entity: owner)
        return request
    }
}
