extension EntityDescription {
    /// Creates an object of the entity named `entityName` in the context's model and inserts it
    /// into `context` (Core Data's `insertNewObject(forEntityName:into:)`).
    ///
    /// The object is an instance of the subclass registered for the entity (see
    /// ``ManagedObject/register(for:)``), else of ``ManagedObject``; cast it to the subclass.
    ///
    /// - Important: a context without a coordinator, a name the model does not have or an
    ///   abstract entity stops the program with a message naming the entity, as Core Data raises
    ///   an exception. For names that come from outside the program, use
    ///   ``insertNewObject(forCheckedEntityName:into:)``.
    /// - Parameters:
    ///   - entityName: the name of a non-abstract entity of the model of `context`'s coordinator.
    ///   - context: the context to insert the object into.
    /// - Returns: the new object, with a temporary ID.
    public static func insertNewObject(
        forEntityName entityName: String, into context: ManagedObjectContext
    ) -> ManagedObject {
        do {
            return try insertNewObject(forCheckedEntityName: entityName, into: context)
        } catch {
            preconditionFailure("insertNewObject(forEntityName: \"\(entityName)\"): \(error)")
        }
    }

    /// Creates an object of the entity named `entityName` and inserts it into `context`, as
    /// ``insertNewObject(forEntityName:into:)``, throwing instead of stopping the program.
    ///
    /// - Parameters:
    ///   - entityName: the name of an entity of the model of `context`'s coordinator.
    ///   - context: the context to insert the object into.
    /// - Returns: the new object, with a temporary ID.
    /// - Throws: ``CoreDataError`` `coreData` when the context has no coordinator, the model has
    ///   no such entity or the entity is abstract.
    public static func insertNewObject(
        forCheckedEntityName entityName: String, into context: ManagedObjectContext
    ) throws -> ManagedObject {
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError(
                .coreData, "cannot insert a \(entityName): the context has no persistent store coordinator")
        }
        guard let entity = model.entitiesByName[entityName] else {
            throw CoreDataError(.coreData, "the model has no entity named \(entityName)")
        }
        guard !entity.isAbstract else {
            throw CoreDataError(.coreData, "cannot insert an object of the abstract entity \(entityName)")
        }
        return ManagedObjectClassRegistry.type(for: entity).init(entity: entity, insertInto: context)
    }
}
