@_spi(Reflection) import Swift
import Logging
import Synchronization

/// The `@Managed` properties of a `ManagedObject` subclass (inherited ones included): the model
/// name of each property's key path, read from the class's field metadata with no instance.
///
/// The `@Managed` macro gives each property a zero-size stored property whose type is an
/// ``_ManagedPropertyDeclaration`` naming the key path and the model property; the table
/// collects those types from the class's fields (the reflection metadata the compiler emits
/// for every class, superclasses' fields first) and roots each key path at the class, so an
/// inherited property is found through the subclass too. Built once per class.
// @unchecked: every property is immutable after init; key paths are immutable.
final class ManagedPropertyTable: @unchecked Sendable {
    /// A `@Managed` property.
    struct Property {
        /// The model property's name.
        let name: String
        /// The Swift property's key path, rooted at the table's class.
        let keyPath: AnyKeyPath
        /// The component of the key path rooted at the declaring class, as its description
        /// prints it (`.<computed 0x… (String)>`, or `.name` when the getter's symbol is
        /// exported), to name the components of longer key paths.
        let component: Substring
    }

    /// Every `@Managed` property, superclasses' first.
    let properties: [Property]
    /// The model name of each property, by key path.
    let names: [AnyKeyPath: String]

    private init(_ type: ManagedObject.Type) {
        var properties: [Property] = []
        _ = _forEachField(of: type, options: Self.classFields) { _, _, fieldType, _ in
            guard let declaration = fieldType as? any _ManagedPropertyDeclaration.Type,
                let keyPath = declaration.keyPath(rootedAt: type)
            else { return true }
            let declared = declaration.keyPath
            let prefix = ManagedKeyPathNames.rootPrefix(of: declared)
            let description = String(describing: declared)
            let component = description.hasPrefix(prefix) ? description.dropFirst(prefix.count) : ""
            properties.append(Property(name: declaration.modelName, keyPath: keyPath, component: component))
            return true
        }
        self.properties = properties
        names = Dictionary(properties.map { ($0.keyPath, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// `[.classType, .ignoreUnknown]`, by value: the standard library declares those options as
    /// mutable static properties, which strict concurrency does not let us read.
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0 | 1 << 1)

    private static let tables = Mutex<[ObjectIdentifier: ManagedPropertyTable]>([:])

    /// The table of `type`, built once.
    static func of(_ type: ManagedObject.Type) -> ManagedPropertyTable {
        if let known = tables.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let table = ManagedPropertyTable(type)
        return tables.withLock { tables in
            if let known = tables[ObjectIdentifier(type)] { return known }
            tables[ObjectIdentifier(type)] = table
            return table
        }
    }

    /// Checks the `@Managed` properties of `type` against `entity` when the class is bound to it:
    /// each one the entity lacks is logged as a warning. Core Data accepts such a class and
    /// raises when the property is accessed; here accessing it stops the process with an error
    /// naming the class, the property and the entity.
    static func check(_ type: ManagedObject.Type, against entity: EntityDescription) {
        for name in missingProperties(of: type, in: entity) {
            modelLogger.warning(
                "@Managed property has no model property",
                metadata: ["class": "\(type)", "property": "\(name)", "entity": "\(entity.name)"])
        }
    }

    /// The model names of the `@Managed` properties of `type` that `entity` (with its
    /// superentities) does not have.
    static func missingProperties(of type: ManagedObject.Type, in entity: EntityDescription) -> [String] {
        let slots = EntityRuntime.of(entity).slots
        return of(type).properties.map(\.name).filter { slots[$0] == nil }
    }
}
