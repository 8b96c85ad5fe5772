import Synchronization

/// The subclass of `ManagedObject` to instantiate for each entity.
///
/// A subclass is registered when its first instance is created with
/// ``ManagedObject/init(entity:insertInto:)`` or ``ManagedObject/init(context:)``, or explicitly
/// with ``ManagedObject/register(for:)``: Core Data finds it through the Objective-C runtime,
/// which Linux does not have.
enum ManagedObjectClassRegistry {
    private static let types = Mutex<[String: ManagedObject.Type]>([:])

    /// Registers `type` as the class of the entity named `name`.
    static func register(_ type: ManagedObject.Type, forName name: String) {
        types.withLock { types in
            if types[name] != type { types[name] = type }
        }
    }

    /// Registers `type` as the class of `entity`.
    static func register(_ type: ManagedObject.Type, for entity: EntityDescription) {
        register(type, forName: entity.name)
    }

    /// The class registered for `entity`, else for its nearest superentity, else `ManagedObject`.
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        types.withLock { types in
            var current: EntityDescription? = entity
            while let candidate = current {
                if let type = types[candidate.name] { return type }
                current = candidate.superentity
            }
            return ManagedObject.self
        }
    }
}

extension ManagedObject {
    /// Registers this subclass as the class of `entityName`'s objects, so that fetches create
    /// instances of it. Needed only when a fetch may run before the first instance is created.
    public static func register(for entityName: String) {
        ManagedObjectClassRegistry.register(self, forName: entityName)
    }
}
