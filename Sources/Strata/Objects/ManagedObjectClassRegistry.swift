import Synchronization

/// The subclass of `ManagedObject` to instantiate for each entity.
///
/// A subclass is registered when its first instance is created with
/// ``ManagedObject/init(entity:insertInto:)`` or ``ManagedObject/init(context:)``, or explicitly
/// with ``ManagedObject/register(for:)``: Core Data finds it through the Objective-C runtime,
/// which Linux does not have.
enum ManagedObjectClassRegistry {
    private struct Registry {
        /// Classes registered for one entity description (one model).
        var byEntity: [ObjectIdentifier: ManagedObject.Type] = [:]
        /// Classes registered for an entity name (any model).
        var byName: [String: ManagedObject.Type] = [:]
    }

    private static let registry = Mutex(Registry())

    /// Registers `type` as the class of every entity named `name`.
    static func register(_ type: ManagedObject.Type, forName name: String) {
        registry.withLock { registry in
            if registry.byName[name] != type { registry.byName[name] = type }
        }
    }

    /// Registers `type` as the class of `entity` (and of its name, unless another class has it).
    static func register(_ type: ManagedObject.Type, for entity: EntityDescription) {
        registry.withLock { registry in
            if registry.byEntity[ObjectIdentifier(entity)] != type { registry.byEntity[ObjectIdentifier(entity)] = type }
            if registry.byName[entity.name] == nil { registry.byName[entity.name] = type }
        }
    }

    /// The class registered for `entity`, else for its name, else for its nearest superentity,
    /// else `ManagedObject`. Entity descriptions live as long as their model, so their identity
    /// is not reused while objects of them exist.
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        registry.withLock { registry in
            var current: EntityDescription? = entity
            while let candidate = current {
                if let type = registry.byEntity[ObjectIdentifier(candidate)] ?? registry.byName[candidate.name] { return type }
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
