import Foundation

extension ManagedObject {
    /// The value of the fetched property in `slot`: the results of its fetch request, run in the
    /// object's context the first time it is read and kept until the object is refreshed. For a
    /// slot of another kind, its value as ``publicValue(_:)`` reads it.
    ///
    /// - Throws: ``CoreDataError`` naming the object and property when the fetch fails, such as
    ///   for a predicate naming a key the fetched entity lacks.
    func fetchedPropertyValue(_ slot: Int) throws -> Any? {
        guard let property = runtime.properties[slot] as? FetchedPropertyDescription else {
            return try publicValue(slot)
        }
        try fireFault()
        if let cached = values[slot] { return cached }
        guard let template = property.fetchRequest, let context = managedObjectContext else { return [ManagedObject]() }
        let request = template.copied(as: ManagedObject.self)
        if let predicate = template.predicate {
            let source: [AnyHashable: Any] = [
                "name": property.name, "userInfo": property.userInfo ?? [:], "entity": entity.entityName,
            ]
            do {
                request.predicate =
                    try predicate
                    .withSubstitutionVariables(["FETCH_SOURCE": self, "FETCHED_PROPERTY": source])
                    .foldingConstantKeyPaths()
            } catch {
                throw CoreDataError(
                    .coreData,
                    "the fetched property \(entity.entityName).\(property.name) cannot use its predicate: \(error)",
                    objectID: objectID, key: property.name)
            }
        }
        let results: [Any]
        do {
            switch template.resultType {
            case .managedObjectResultType: results = try context.fetch(request)
            case .managedObjectIDResultType:
                request.resultType = .managedObjectResultType
                results = try context.fetch(request).map(\.objectID)
            default:
                throw CoreDataError(
                    .coreData,
                    "the fetched property \(entity.entityName).\(property.name) asks for \(template.resultType) results; fetched properties return objects or object IDs",
                    objectID: objectID, key: property.name)
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(
                .coreData, "the fetched property \(entity.entityName).\(property.name) cannot be evaluated: \(error)",
                objectID: objectID, key: property.name)
        }
        values[slot] = results
        return results
    }
}
