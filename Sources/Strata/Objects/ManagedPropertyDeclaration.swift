/// The declaration of one `@Managed` property, which the `@Managed` macro generates as a nested
/// type of the class: the property's key paths and its model property's name.
///
/// The macro holds an instance (of size zero) in a stored property, so that the class's field
/// metadata lists every `@Managed` property; see ``ManagedPropertyTable``. Not meant to be
/// conformed to by hand.
public protocol _ManagedPropertyDeclaration {
    /// The key path of the Swift property, rooted at the class that declares it (`\Employee.name`).
    static var keyPath: AnyKeyPath { get }
    /// The key path of the Swift property rooted at `root` (`\Manager.name` for a subclass
    /// `Manager` of `Employee`), or `nil` when `root` is not the declaring class or a subclass.
    ///
    /// A Swift key path's root is the type it is written on, so an inherited property's key path
    /// through a subclass is another key path than through its declaring class.
    static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath?
    /// The name of the model property the Swift property reads and writes.
    static var modelName: String { get }
}

/// A class whose key paths `@Managed` declarations can be rooted at: `ManagedObject` and its
/// subclasses. An existential of it opens to the dynamic subclass, which roots the key path.
public protocol _ManagedKeyPathRoot: AnyObject {}

extension ManagedObject: _ManagedKeyPathRoot {}
