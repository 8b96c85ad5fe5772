import Logging
import StrataSynchronization
import Synchronization

private let logger = Logger(label: "strata.model")

/// The subclass of `ManagedObject` to instantiate for each entity.
///
/// A subclass is registered when its first instance is created with
/// ``ManagedObject/init(entity:insertInto:)`` or ``ManagedObject/init(context:)``, or explicitly
/// with ``ManagedObject/register(for:)``. The entity's `managedObjectClassName` is looked up by
/// name first, as Core Data does through the Objective-C runtime: a module-qualified name
/// (`App.Employee`, what `NSStringFromClass` gives) directly, a plain name (`Employee`, what
/// Xcode writes for "Current Product Module") among the registered classes, in the modules
/// registered with ``ManagedObject/registerClasses(inModule:)``, and on Linux among every
/// top-level class of the loaded images (``SwiftTypeRecords``), so that no registration is
/// needed.
enum ManagedObjectClassRegistry {
    /// The class registered for one entity description, which is held weakly: an entity
    /// description's identifier is reused once it is gone, and must then name nothing.
    private struct EntityClass {
        weak var entity: EntityDescription?
        let type: ManagedObject.Type
    }

    private struct Registry {
        /// Classes registered for one entity description (one model).
        var byEntity: [ObjectIdentifier: EntityClass] = [:]
        /// Classes registered for an entity name (any model).
        var byName: [String: ManagedObject.Type] = [:]
        /// Modules whose classes plain class names may name.
        var modules: [String] = []
        /// Classes found by class name, and names found to name no subclass (until the next
        /// module is registered).
        var byClassName: [String: ManagedObject.Type?] = [:]
    }

    private static let registry = Lock(Registry())
    /// Counts the registrations that can change what ``type(for:)`` returns.
    private static let changes = Atomic<UInt64>(0)

    /// The number of registrations so far that can change what ``type(for:)`` returns: a class
    /// looked up while it had one value is still the entity's class while it keeps it.
    static var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// Registers `type` as the class of every entity named `name`.
    static func register(_ type: ManagedObject.Type, forName name: String) {
        registry.withLock { registry in
            if registry.byName[name] != type {
                registry.byName[name] = type
                remember(type, in: &registry)
                changes.add(1, ordering: .releasing)
            }
        }
    }

    /// Registers `type` as the class of `entity` (and of its name, unless another class has it),
    /// checking its `@Managed` properties against the entity the first time: what creating an
    /// instance of `type` does. Unless the last instance created of the entity (whose runtime is
    /// `runtime`) was of `type` too: then one atomic read, no lock.
    static func register(_ type: ManagedObject.Type, for entity: EntityDescription, runtime: EntityRuntime) {
        let bits = UInt(bitPattern: ObjectIdentifier(type))
        guard runtime.registeredClass.load(ordering: .acquiring) != bits else { return }
        let bound = registry.withLock { registry in
            if let known = registry.byEntity[ObjectIdentifier(entity)], known.entity === entity, known.type == type {
                return false
            }
            registry.byEntity = registry.byEntity.filter { $0.value.entity != nil }
            registry.byEntity[ObjectIdentifier(entity)] = EntityClass(entity: entity, type: type)
            if registry.byName[entity.entityName] == nil, type != ManagedObject.self {
                registry.byName[entity.entityName] = type
            }
            remember(type, in: &registry)
            changes.add(1, ordering: .releasing)
            return true
        }
        if bound { ManagedPropertyTable.check(type, against: entity) }
        runtime.registeredClass.store(bits, ordering: .releasing)
    }

    /// Records the module-qualified name of a registered class, and its plain name when it is
    /// declared at the top level of its module: a model's plain class name names a top-level
    /// class, never one nested in another type that happens to share its name.
    private static func remember(_ type: ManagedObject.Type, in registry: inout Registry) {
        let qualified = String(reflecting: type)
        registry.byClassName[qualified] = .some(type)
        if qualified.split(separator: ".").count == 2 { registry.byClassName[String(describing: type)] = .some(type) }
    }

    /// Lets plain class names name classes of the module `module`.
    static func register(module: String) {
        registry.withLock { registry in
            guard !registry.modules.contains(module) else { return }
            registry.modules.append(module)
            registry.byClassName = registry.byClassName.filter { $0.value != nil }
            changes.add(1, ordering: .releasing)
        }
    }

    /// The class registered for `entity`, else the one its `managedObjectClassName` names, else
    /// the one registered for its name, else the same for its nearest superentity, else
    /// `ManagedObject`. Entity descriptions live as long as their model, so their identity is
    /// not reused while objects of them exist.
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        registry.withLock { registry in
            var current: EntityDescription? = entity
            while let candidate = current {
                let registered = registry.byEntity[ObjectIdentifier(candidate)].flatMap {
                    $0.entity === candidate ? $0.type : nil
                }
                if let type = registered ?? resolve(candidate.managedObjectClassName, in: &registry)
                    ?? registry.byName[candidate.entityName]
                {
                    return type
                }
                current = candidate.superentity
            }
            return ManagedObject.self
        }
    }

    /// The subclass a class name names: module-qualified (`App.Employee`), or plain (`Employee`,
    /// also Xcode's `.Employee`) in a registered module, else (on Linux) the top-level subclass
    /// of that name in the loaded images. `nil` for `ManagedObject` itself.
    private static func resolve(_ className: String, in registry: inout Registry) -> ManagedObject.Type? {
        if let known = registry.byClassName[className] { return known }
        let plain = className.hasPrefix(".") ? String(className.dropFirst()) : className
        let names = plain.contains(".") ? [plain] : registry.modules.map { "\($0).\(plain)" }
        var found = names.lazy.compactMap { _typeByName($0) as? ManagedObject.Type }.first { $0 != ManagedObject.self }
        #if os(Linux)
        if found == nil, !plain.contains("."), !["ManagedObject", "NSManagedObject"].contains(plain) {
            found = recordedClass(named: plain)
        }
        #endif
        registry.byClassName[className] = .some(found)
        return found
    }

    /// The `ManagedObject` subclass declared at the top level of a module of the loaded images
    /// with the plain name `name`, found from the images' type metadata records. When several
    /// modules declare one, the first by module-qualified name is taken and a warning names them
    /// all (register the class, or qualify the model's class name, to choose another).
    static func recordedClass(named name: String) -> ManagedObject.Type? {
        let classes = SwiftTypeRecords.types(named: name, kind: .class, topLevel: true)
            .compactMap { $0 as? ManagedObject.Type }
            .filter { $0 != ManagedObject.self }
            .sorted { String(reflecting: $0) < String(reflecting: $1) }
        if classes.count > 1 {
            logger.warning(
                "several ManagedObject subclasses have the model's class name; using the first",
                metadata: [
                    "className": "\(name)", "using": "\(String(reflecting: classes[0]))",
                    "candidates": "\(classes.map { String(reflecting: $0) })",
                ])
        }
        return classes.first
    }
}

extension ManagedObject {
    /// Registers this subclass as the class of `entityName`'s objects, so that fetches create
    /// instances of it. Needed only when a fetch may run before the first instance is created.
    public static func register(for entityName: String) {
        ManagedObjectClassRegistry.register(self, forName: entityName)
    }

    /// Lets a model's plain class names (`Employee`, as Xcode writes `representedClassName`
    /// for the current module) name the subclasses of the module `moduleName` first.
    /// Module-qualified names (`App.Employee`) need no registration, and on Linux neither do
    /// plain names: they are found among the loaded images' classes; register the module to
    /// choose it when several modules have a subclass of the same name.
    public static func registerClasses(inModule moduleName: String) {
        ManagedObjectClassRegistry.register(module: moduleName)
    }
}
