/// Finds the model key path (`salary`, `department.name`) that a Swift key path of a
/// `ManagedObject` subclass reads, so that Foundation `#Predicate`s and `SortDescriptor`s can be
/// translated to key-based predicates and sort descriptors.
///
/// Swift on Linux cannot name the property behind a key path (Core Data uses the Objective-C
/// key-value coding string), so `@Managed` declares it: every `@Managed` property lists its key
/// path and model name in its class's ``ManagedPropertyTable``. No instance is created and no
/// user code runs. A key path of one component (all that `#Predicate` makes) is looked up in its
/// root class's table; a longer one (`\Employee.department?.name`, in a `SortDescriptor`) is
/// named component by component, each component matched with the `@Managed` property of the
/// previous component's class that prints the same. Swift prints an inherited property reached
/// through a subclass (`\Manager.department?.name` for a property `Employee` declares) with an
/// accessor of its own, so such a component is not named. Key paths of other properties
/// (computed, non-managed) have no name.
enum ManagedKeyPathNames {
    /// The model key path `keyPath` reads, or `nil` when one of its components is not a
    /// `@Managed` property.
    static func name(of keyPath: AnyKeyPath) -> String? {
        guard let root = type(of: keyPath).rootType as? ManagedObject.Type else { return nil }
        var table = ManagedPropertyTable.of(root)
        if let name = table.names[keyPath] { return name }
        let description = String(describing: keyPath)
        let prefix = rootPrefix(of: keyPath)
        guard description.hasPrefix(prefix) else { return nil }
        var rest = description.dropFirst(prefix.count)
        var names: [String] = []
        while !rest.isEmpty {
            guard let property = table.properties.first(where: { !$0.component.isEmpty && follows(rest, $0.component) })
            else { return nil }
            names.append(property.name)
            rest = rest.dropFirst(property.component.count).drop { $0 == "?" || $0 == "!" }
            guard !rest.isEmpty else { break }
            guard let next = ManagedObjectValueType.object(of: type(of: property.keyPath).valueType) else { return nil }
            table = ManagedPropertyTable.of(next)
        }
        return names.isEmpty ? nil : names.joined(separator: ".")
    }

    /// How a key path's description starts: `\` and its root type.
    static func rootPrefix(of keyPath: AnyKeyPath) -> String {
        "\\" + String(describing: type(of: keyPath).rootType)
    }

    /// Whether `text` starts with the whole component `component` (not a longer name).
    private static func follows(_ text: Substring, _ component: Substring) -> Bool {
        guard text.hasPrefix(component) else { return false }
        let next = text.dropFirst(component.count).first
        return next == nil || next == "." || next == "?" || next == "!"
    }
}

/// The `ManagedObject` subclass a to-one relationship's value type holds.
enum ManagedObjectValueType {
    /// `type` as a subclass, through any number of optionals; `nil` for other types.
    static func object(of type: Any.Type) -> ManagedObject.Type? {
        if let object = type as? ManagedObject.Type { return object }
        if let optional = type as? any OptionalType.Type { return object(of: optional.wrappedType) }
        return nil
    }
}

/// An `Optional`, seen as a type.
private protocol OptionalType {
    /// The wrapped type.
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    fileprivate static var wrappedType: Any.Type { Wrapped.self }
}
