import Foundation

extension MigrationManager: ExpressionFunctionTarget {
    /// The functions Core Data's migration expressions call on `$manager`:
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`,
    /// `sourceInstancesForEntityMappingNamed:destinationInstances:`,
    /// `fetchRequestForSourceEntityNamed:predicateString:` (a fetch of the entity's own objects
    /// meeting the predicate), and `valueForKey:` of `sourceContext`, `destinationContext`,
    /// `sourceModel`, `destinationModel`, `mappingModel`, `currentEntityMapping` and `userInfo`.
    ///
    /// - Throws: ``CoreDataError`` `migration` for another function or wrong arguments;
    ///   ``FetchPredicateError`` for a predicate string that does not parse.
    public func value(forFunction selectorName: String, arguments: [Any?]) throws -> Any? {
        /// The managed objects an argument holds: one, a collection of them, or none.
        func objects(_ argument: Any?) -> [ManagedObject] {
            guard let argument = FetchValue.unwrap(argument) else { return [] }
            if let object = argument as? ManagedObject { return [object] }
            return FetchValue.elements(of: argument)?.compactMap { $0 as? ManagedObject } ?? []
        }
        switch (selectorName, arguments.count, arguments.first.flatMap { $0 as? String }) {
        case ("destinationInstancesForEntityMappingNamed:sourceInstances:", 2, let name?):
            return destinationInstances(forEntityMappingName: name, sourceInstances: objects(arguments[1]))
        case ("sourceInstancesForEntityMappingNamed:destinationInstances:", 2, let name?):
            return sourceInstances(forEntityMappingName: name, destinationInstances: objects(arguments[1]))
        case ("fetchRequestForSourceEntityNamed:predicateString:", 2, let entity?):
            let request = FetchRequest<FetchRequestResult>(entityName: entity)
            request.predicate = try FetchPredicate(checkedFormat: arguments[1] as? String ?? "TRUEPREDICATE")
            request.includesSubentities = false
            return request
        case ("valueForKey:", 1, "sourceContext"?): return sourceContext
        case ("valueForKey:", 1, "destinationContext"?): return destinationContext
        case ("valueForKey:", 1, "sourceModel"?): return sourceModel
        case ("valueForKey:", 1, "destinationModel"?): return destinationModel
        case ("valueForKey:", 1, "mappingModel"?): return mappingModel
        case ("valueForKey:", 1, "currentEntityMapping"?): return currentEntityMapping
        case ("valueForKey:", 1, "userInfo"?): return userInfo
        default:
            throw CoreDataError(
                .migration, "MigrationManager has no function \(selectorName) of \(arguments.count) arguments")
        }
    }
}
