import StrataSynchronization
import Synchronization

/// The models coordinators use, newest first, held weakly: where ``ManagedObject/entity()``
/// looks for a class's entity, as Core Data looks in the models it has loaded.
enum LoadedModels {
    // @unchecked: the reference is only read and written under the registry's lock.
    private struct Entry: @unchecked Sendable {
        weak var model: ManagedObjectModel?
    }

    private static let models = Lock<[Entry]>([])

    /// Records that a coordinator uses `model`.
    static func add(_ model: ManagedObjectModel) {
        models.withLock { models in
            models.removeAll { $0.model == nil || $0.model === model }
            models.insert(Entry(model: model), at: 0)
        }
    }

    /// The models still alive, newest first.
    static var all: [ManagedObjectModel] {
        models.withLock { $0.compactMap(\.model) }
    }
}

extension ManagedObjectModel {
    /// The entity whose `managedObjectClassName` is `type`'s name (with or without its module),
    /// else the entity named as the class.
    func entity(for type: ManagedObject.Type) -> EntityDescription? {
        let short = String(describing: type)
        let qualified = String(reflecting: type)
        return entities.first { $0.managedObjectClassName == qualified || $0.managedObjectClassName == short }
            ?? entities.first { $0.entityName == short }
    }
}

extension ManagedObject {
    /// The entity of this class in the models that persistent store coordinators use (the most
    /// recent one when several have it), as Core Data's `entity()`: the entity whose
    /// `managedObjectClassName` is this class, else the entity named as the class.
    ///
    /// - Important: stops the program when no model in use has such an entity: load the model
    ///   (create the coordinator or container) first.
    public class func entity() -> EntityDescription {
        for model in LoadedModels.all {
            if let entity = model.entity(for: self) { return entity }
        }
        preconditionFailure(
            "no model in use has an entity for the class \(String(reflecting: self)); load the model into a coordinator first"
        )
    }
}

extension EntityDescription {
    /// The entity named `entityName` in the model of `context`'s coordinator, if any (Core Data's
    /// `entity(forEntityName:in:)`).
    ///
    /// - Parameters:
    ///   - entityName: the entity's name.
    ///   - context: a context with a persistent store coordinator.
    /// - Returns: the entity, or `nil` when the context has no coordinator or its model no such entity.
    public static func entity(forEntityName entityName: String, in context: ManagedObjectContext) -> EntityDescription?
    {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }
}
