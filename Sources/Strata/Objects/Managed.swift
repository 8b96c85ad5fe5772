import Foundation

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
/// `Bool`, `String`, `Date`, `Data`, `UUID`, `URL`), or the types Xcode's code generation picks
/// (`Int` for any integer attribute, `NSNumber`, `NSDecimalNumber`); to-one relationships the
/// subclass (optional), to-many relationships `Set<Subclass>` or `NSSet`, ordered ones
/// `[Subclass]` or `NSOrderedSet` (reading gives the related objects, setting replaces them).
///
/// Properties may be declared in the class body or, as Xcode's `+CoreDataProperties.swift`
/// does, in an extension. The to-many accessor methods Xcode generates take
/// ``ManagedAccessor()`` instead.
///
/// `@Managed` is a macro: it turns the property into accessors that read and write the model
/// property by name (through the slot found last time, with no name lookup), and declares the
/// property's key path and model name (in a nested type held by a zero-size stored property),
/// which names the key path in `#Predicate`s and `SortDescriptor`s without creating an
/// instance. Declare `@Managed` properties with a type annotation and no initial value.
///
/// - Important: Declare a property optional when it can be `nil`; reading `nil` into a
///   non-optional number or `Bool` gives 0 or `false` (as Core Data's scalar accessors do, for
///   an inaccessible fault for instance), into any other non-optional property it stops the
///   process, as Core Data does. A value that does not fit also stops it; use
///   `setValue(_:forCheckedKey:)` to get a thrown error instead.
@attached(accessor)
@attached(peer, names: prefixed(__StrataManaged_), prefixed(__strataManaged_))
public macro Managed() = #externalMacro(module: "StrataMacros", type: "ManagedMacro")

/// A typed, change-tracked property of a `ManagedObject` subclass whose model property has
/// another name than the Swift property: `@Managed("title") var name: String`.
///
/// - Parameter key: the model property's name, a string literal.
@attached(accessor)
@attached(peer, names: prefixed(__StrataManaged_), prefixed(__strataManaged_))
public macro Managed(_ key: String) = #externalMacro(module: "StrataMacros", type: "ManagedMacro")

/// One of the to-many accessor methods Xcode generates, given its body: Core Data's
/// `@NSManaged` on a method.
///
/// ```swift
/// extension Department {
///     @Managed public var employees: NSSet?
///     @ManagedAccessor public func addToEmployees(_ value: Employee)
///     @ManagedAccessor public func removeFromEmployees(_ values: NSSet)
///     @ManagedAccessor public func insertIntoProjects(_ value: Project, at idx: Int)
/// }
/// ```
///
/// Each method works on the relationship named after it, with the first letter lowercased
/// (`addToEmployees` → `employees`, as Core Data derives the key from the selector), through
/// ``ManagedObject/mutableSetValue(forKey:)`` or ``ManagedObject/mutableOrderedSetValue(forKey:)``:
/// `addToX(_:)` and `removeFromX(_:)` with one object, an `NSSet` or an `NSOrderedSet`;
/// `insertIntoX(_:at:)`, `removeFromX(at:)` and `replaceX(at:with:)` with an index or an
/// `NSIndexSet`. A method of another name or shape, or with a body, is an error.
///
/// It is not spelled `@Managed` because Swift gives a function its body only through a body
/// macro, which cannot be attached to a property, and one attribute name resolves to one macro
/// whatever it is attached to.
@attached(body)
public macro ManagedAccessor() = #externalMacro(module: "StrataMacros", type: "ManagedAccessorMacro")

/// A generated to-many accessor method whose relationship has another name than the method's
/// (`@ManagedAccessor("staff") func addToEmployees(_ value: Employee)`).
///
/// - Parameter key: the relationship's name, a string literal.
@attached(body)
public macro ManagedAccessor(_ key: String) = #externalMacro(module: "StrataMacros", type: "ManagedAccessorMacro")

extension ManagedObject {
    /// The value of the model property `key` as `Value`: the getter `@Managed` generates, with
    /// the property's slot hint (`nil` where the macro cannot keep one).
    ///
    /// Stops the process when the entity has no property `key` or its value is not a `Value`,
    /// as Core Data's `@NSManaged` accessors raise.
    public func _managedValue<Value>(forKey key: String, hint: _ManagedSlotHint?) -> Value {
        let value: Any?
        do {
            let slot = try hint?.slot(of: key, in: runtime) ?? runtime.slot(key)
            if runtime.loads[slot] == .plain {
                willAccessValue(forKey: key)
                defer { didAccessValue(forKey: key) }
                // An attribute read straight from the row the object was loaded from is typed
                // without going through `Any`, the first read of a fault too (an object holding
                // a row is loaded: no call to find that out).
                if lazyRow == nil { try fireFault() }
                return try typedPlainValue(slot, as: Value.self, key: key)
            }
            value = try accessValue(slot)
        } catch {
            preconditionFailure("reading \(type(of: self)).\(key): \(error)")
        }
        return ManagedValueCast.cast(value, to: Value.self, key: key)
    }

    /// Sets the model property `key` to `newValue`: the setter `@Managed` generates, with the
    /// property's slot hint (`nil` where the macro cannot keep one).
    ///
    /// Stops the process when the entity has no property `key` or the value does not fit it.
    public func _setManagedValue<Value>(_ newValue: Value, forKey key: String, hint: _ManagedSlotHint?) {
        setManagedValue(forKey: key, hint: hint) { slot in
            // A value of exactly the attribute's type is stored as it is: no cast, no conversion.
            if runtime.exactTypes[slot] == ObjectIdentifier(Value.self) {
                try setAttributeValue(newValue, slot: slot)
            } else {
                // An optional reaches here from generic code only (the macro's setter of an
                // optional property is the overload below), or inside a value typed `Any`.
                let unwrapped =
                    _isOptional(Value.self) || Value.self == Any.self ? OptionalUnwrapper.unwrap(newValue) : newValue
                try setValue(unwrapped, slot: slot, strict: true)
            }
        }
    }

    /// Sets the model property `key` of an optional `@Managed` property to `newValue` (`nil`
    /// clears it): the setter `@Managed` generates for an optional property, which unwraps the
    /// value without a dynamic cast.
    ///
    /// Stops the process when the entity has no property `key` or the value does not fit it.
    public func _setManagedValue<Wrapped>(_ newValue: Wrapped?, forKey key: String, hint: _ManagedSlotHint?) {
        setManagedValue(forKey: key, hint: hint) { slot in
            if let newValue, runtime.exactTypes[slot] == ObjectIdentifier(Wrapped.self) {
                try setAttributeValue(newValue, slot: slot)
            } else {
                try setValue(newValue.map { $0 as Any }, slot: slot, strict: true)
            }
        }
    }

    /// Sets the model property `key` of an optional `@Managed` property of a managed object
    /// class (a to-one relationship) to `newValue` (`nil` clears it): the setter `@Managed`
    /// generates for it, which takes the object as it is, with no `Any` made of it and no
    /// dynamic cast (through the general path, ~2,000 of the ~6,100 instructions of setting a
    /// relationship, callgrind, W1).
    ///
    /// Stops the process when the entity has no property `key` or the object does not fit it.
    public func _setManagedValue<Object: ManagedObject>(
        _ newValue: Object?, forKey key: String, hint: _ManagedSlotHint?
    ) {
        setManagedValue(forKey: key, hint: hint) { slot in
            if case .toOne(let relationship) = runtime.kinds[slot] {
                try setToOne(newValue, relationship, slot: slot)
            } else {
                try setValue(newValue.map { $0 as Any }, slot: slot, strict: true)
            }
        }
    }

    /// Runs `set` with the slot of the model property `key` (through `hint` when given),
    /// stopping the process on what it throws, as Core Data's `@NSManaged` setters raise.
    private func setManagedValue(forKey key: String, hint: _ManagedSlotHint?, _ set: (_ slot: Int) throws -> Void) {
        do {
            try set(try hint?.slot(of: key, in: runtime) ?? runtime.slot(key))
        } catch {
            preconditionFailure("setting \(type(of: self)).\(key): \(error)")
        }
    }
}

/// Converts between `value(forKey:)` results and typed property values.
enum ManagedValueCast {
    /// `value` as `T`, converting collections of objects to the subclass's element type.
    static func cast<T>(_ value: Any?, to _: T.Type, key: String) -> T {
        if let value, type(of: value) == T.self { return exactly(value) }
        return converted(value, to: T.self, key: key)
    }

    /// `value` as `T` when its type is not exactly `T`: kept out of ``cast(_:to:key:)`` so
    /// that the common case makes no `Optional<T>` metadata.
    @inline(never)
    private static func converted<T>(_ value: Any?, to _: T.Type, key: String) -> T {
        if let bridged = FoundationValueBridging.value(value, as: T.self) { return bridged }
        if let typed = value as? T { return typed }
        if value == nil, let zero = ScalarZero.zero(of: T.self) { return zero }
        preconditionFailure("\(key) holds \(value.map { "\(type(of: $0))" } ?? "nil"), which is not \(T.self)")
    }

    /// `value`, whose dynamic type is exactly `T`, read without a dynamic cast and without
    /// `Optional<T>`'s metadata (the value of an attribute read into a property of the
    /// attribute's own type).
    private static func exactly<T>(_ value: Any) -> T {
        func open<Held>(_ held: Held) -> T { unsafeBitCast(held, to: T.self) }
        return open(value)
    }
}
