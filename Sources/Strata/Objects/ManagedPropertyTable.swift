@_spi(Reflection) import Swift
import Logging
import StrataSynchronization
import Synchronization

/// The `@Managed` properties of a `ManagedObject` subclass (inherited ones included): the model
/// name of each property's key path, read from the class's field metadata with no instance.
///
/// The `@Managed` macro gives each property a nested type, an ``_ManagedPropertyDeclaration``
/// naming the key path and the model property, and in a class body a zero-size stored property
/// of that type. The table collects those types from the class's fields (the reflection
/// metadata the compiler emits for every class, superclasses' fields first) and, for the
/// properties declared in extensions (which cannot hold stored properties), from the loaded
/// images' type records (``SwiftTypeRecords``, Linux), and roots each key path at the class,
/// so an inherited property is found through the subclass too. Built once per class.
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
        var seen: Set<ObjectIdentifier> = []
        func add(_ declaration: any _ManagedPropertyDeclaration.Type) {
            guard seen.insert(ObjectIdentifier(declaration)).inserted, let keyPath = declaration.keyPath(rootedAt: type)
            else { return }
            let declared = declaration.keyPath
            let prefix = ManagedKeyPathNames.rootPrefix(of: declared)
            let description = String(describing: declared)
            let component = description.hasPrefix(prefix) ? description.dropFirst(prefix.count) : ""
            properties.append(Property(name: declaration.modelName, keyPath: keyPath, component: component))
        }
        _ = _forEachField(of: type, options: Self.classFields) { _, _, fieldType, _ in
            if let declaration = fieldType as? any _ManagedPropertyDeclaration.Type { add(declaration) }
            return true
        }
        // Declarations made in extensions have no stored field: they are found among the
        // images' types (those of the class body again, skipped), rooted at the class or a
        // superclass.
        for declaration in Self.recordedDeclarations() { add(declaration) }
        self.properties = properties
        names = Dictionary(properties.map { ($0.keyPath, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// `[.classType, .ignoreUnknown]`, by value: the standard library declares those options as
    /// mutable static properties, which strict concurrency does not let us read.
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0 | 1 << 1)

    private static let tables = Lock<[ObjectIdentifier: ManagedPropertyTable]>([:])

    /// Every `@Managed` declaration type of the loaded images, with the number of images they
    /// were read from.
    private static let declarations = Lock<RecordedDeclarations?>(nil)

    /// The declaration types read from the images, and how many images they were read from.
    // @unchecked: metatypes are immutable; the existential metatype is not `Sendable` only
    // because the protocol does not require `SendableMetatype`.
    private struct RecordedDeclarations: @unchecked Sendable {
        let images: Int
        let types: [any _ManagedPropertyDeclaration.Type]
    }

    /// Every `@Managed` declaration type of the loaded images (the nested types the macro
    /// declares, found by their name's prefix among the images' type records; none outside
    /// Linux), read again when an image has been loaded since.
    private static func recordedDeclarations() -> [any _ManagedPropertyDeclaration.Type] {
        let images = SwiftTypeRecords.imageCount
        if let known = declarations.withLock({ $0 }), known.images == images { return known.types }
        let types = SwiftTypeRecords.types(named: "__StrataManaged_", prefix: true, kind: .struct, topLevel: false)
            .compactMap { $0 as? any _ManagedPropertyDeclaration.Type }
        declarations.withLock { $0 = RecordedDeclarations(images: images, types: types) }
        return types
    }

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
                metadata: ["class": "\(type)", "property": "\(name)", "entity": "\(entity.entityName)"])
        }
    }

    /// The model names of the `@Managed` properties of `type` that `entity` (with its
    /// superentities) does not have.
    static func missingProperties(of type: ManagedObject.Type, in entity: EntityDescription) -> [String] {
        let slots = EntityRuntime.of(entity).slots
        return of(type).properties.map(\.name).filter { slots[$0] == nil }
    }
}
