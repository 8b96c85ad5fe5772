import Foundation
import Synchronization

/// A typed, change-tracked property of a `ManagedObject` subclass: Core Data's `@NSManaged`.
///
/// ```swift
/// final class Employee: ManagedObject {
///     @Managed var name: String
///     @Managed var salary: Int64
///     @Managed var department: Department?
/// }
/// final class Department: ManagedObject {
///     @Managed var employees: Set<Employee>
/// }
/// ```
///
/// The property's name is the model property's name (or pass it: `@Managed("title") var name`).
/// Reading fires the fault; setting records the change and maintains the inverse relationship.
/// Attributes use the model's Swift types (`Int16`/`Int32`/`Int64`, `Double`, `Float`, `Decimal`,
/// `Bool`, `String`, `Date`, `Data`, `UUID`, `URL`), to-one relationships the subclass
/// (optional), to-many relationships `Set<Subclass>`, ordered ones `[Subclass]`.
///
/// - Important: Declare a property optional when it can be `nil`; reading `nil` into a
///   non-optional number or `Bool` gives 0 or `false` (as Core Data's scalar accessors do, for
///   an inaccessible fault for instance), into any other non-optional property it stops the
///   process, as Core Data does. A value that does not fit also stops it; use
///   `setValue(_:forCheckedKey:)` to get a thrown error instead.
@propertyWrapper
public struct Managed<Value> {
    private let key: String?
    /// 0, or the marker that tells this wrapper apart while its name is looked up by reflection.
    private let identity: Int

    /// A property named like the Swift property.
    public init() {
        key = nil
        identity = 0
    }

    /// A property with an explicit model name.
    public init(_ key: String) {
        self.key = key
        identity = 0
    }

    /// A wrapper marked with `identity`, put in place of the real one while its name is looked up.
    private init(marker identity: Int) {
        key = nil
        self.identity = identity
    }

    /// Managed properties are reached through their object only.
    @available(*, unavailable, message: "@Managed can only be used in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("@Managed can only be used in ManagedObject subclasses") }
        set { preconditionFailure("@Managed can only be used in ManagedObject subclasses") }
    }

    /// Reads and writes the property through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let slot: Int
            let value: Any?
            do {
                slot = try Self.slot(in: object, storageKeyPath)
                value = try object.accessValue(slot)
            } catch {
                preconditionFailure("reading \(Object.self).\(object[keyPath: storageKeyPath].name(in: object, storageKeyPath)): \(error)")
            }
            return ManagedValueCast.cast(value, to: Value.self, key: object.runtime.names[slot])
        }
        set {
            do {
                let key = object.runtime.names[try Self.slot(in: object, storageKeyPath)]
                try object.setValue(ManagedValueCast.unwrap(newValue), forCheckedKey: key)
            } catch {
                preconditionFailure("setting \(Object.self).\(object[keyPath: storageKeyPath].name(in: object, storageKeyPath)): \(error)")
            }
        }
    }

    /// The slot of the property in `object`'s entity, looked up by name the first time only.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when the entity has no such property.
    private static func slot<Object: ManagedObject>(
        in object: Object, _ storage: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) throws -> Int {
        try object.runtime.slot(forStorage: storage) { object[keyPath: storage].name(in: object, storage) }
    }

    /// The model name: the explicit key, or the Swift property's name found by reflection once
    /// per property: the wrapper is swapped for a marked one while the object's mirror is
    /// searched for it, so that wrappers need no identity of their own.
    private func name<Object: ManagedObject>(in object: Object, _ storage: ReferenceWritableKeyPath<Object, Managed<Value>>) -> String {
        if let key { return key }
        return ManagedPropertyNames.name(for: storage) {
            let marker = managedWrapperMarkers.add(1, ordering: .relaxed).newValue
            object[keyPath: storage] = Managed(marker: marker)
            defer { object[keyPath: storage] = self }
            var mirror: Mirror? = Mirror(reflecting: object)
            while let current = mirror {
                for child in current.children {
                    if let wrapper = child.value as? Managed<Value>, wrapper.identity == marker, let label = child.label {
                        return label.hasPrefix("_") ? String(label.dropFirst()) : label
                    }
                }
                mirror = current.superclassMirror
            }
            preconditionFailure("cannot find the @Managed property of \(Object.self)")
        }
    }
}

/// Numbers the markers of ``Managed`` name lookups, so that concurrent lookups never share one.
private let managedWrapperMarkers = Atomic<Int>(0)

/// The model names of `@Managed` properties, by storage key path.
enum ManagedPropertyNames {
    // @unchecked: `buckets` is only touched with `lock` held; key paths are immutable.
    private final class Cache: @unchecked Sendable {
        let lock = NSLock()
        var buckets: [Int: [(keyPath: AnyKeyPath, name: String)]] = [:]
    }

    private static let cache = Cache()

    /// The name cached for `keyPath`, computed by `find` the first time.
    static func name(for keyPath: AnyKeyPath, find: () -> String) -> String {
        let hash = keyPath.hashValue
        let known = cache.lock.withLock { cache.buckets[hash]?.first { $0.keyPath == keyPath }?.name }
        if let known { return known }
        let name = find()
        cache.lock.withLock { cache.buckets[hash, default: []].append((keyPath, name)) }
        return name
    }
}

/// Converts between `value(forKey:)` results and typed property values.
enum ManagedValueCast {
    /// `value` as `T`, converting collections of objects to the subclass's element type.
    static func cast<T>(_ value: Any?, to _: T.Type, key: String) -> T {
        if let typed = value as? T { return typed }
        if value == nil, let zero = ScalarZero.zero(of: T.self) { return zero }
        preconditionFailure("\(key) holds \(value.map { "\(type(of: $0))" } ?? "nil"), which is not \(T.self)")
    }

    /// A typed value as `setValue(_:forKey:)` takes it (`nil` for an empty optional).
    static func unwrap<T>(_ value: T) -> Any? {
        if let optional = value as? any OptionalValue { return optional.wrappedValueIfAny }
        return value
    }
}

/// Lets a generic value that is an `Optional` be unwrapped without reflection.
private protocol OptionalValue {
    /// The wrapped value, or `nil`.
    var wrappedValueIfAny: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedValueIfAny: Any? { map { $0 as Any } }
}
