import Foundation

/// The Foundation types Xcode's code generation gives `@NSManaged` properties where the model's
/// values are Swift types: `NSSet`/`NSOrderedSet` for to-many relationships, `NSNumber` for
/// numbers without `usesScalarValueType`, `NSDecimalNumber` for decimals, and `Int` for any
/// integer attribute. Core Data bridges them through Objective-C; on Linux the runtime's casts
/// do not, so reading a typed property converts here.
enum FoundationValueBridging {
    /// `value` (what ``ManagedObject/value(forKey:)`` returns) as `T` when `T` is one of the types
    /// above (or an optional of one) and the value converts to it; `nil` otherwise.
    ///
    /// A to-many relationship reads as a set of its objects (an empty one for `nil`, as Core Data
    /// never gives `nil` for a to-many relationship).
    static func value<T>(_ value: Any?, as _: T.Type) -> T? {
        if T.self == NSSet.self || T.self == NSSet?.self {
            return (objects(value).map { NSSet(array: $0) } ?? NSSet()) as? T
        }
        if T.self == NSOrderedSet.self || T.self == NSOrderedSet?.self {
            return (objects(value).map { NSOrderedSet(array: $0) } ?? NSOrderedSet()) as? T
        }
        guard let value else { return nil }
        if T.self == Int.self || T.self == Int?.self {
            guard let number = ValueConversion.integer(value), let exact = Int(exactly: number) else { return nil }
            return exact as? T
        }
        if T.self == NSDecimalNumber.self || T.self == NSDecimalNumber?.self {
            guard let decimal = value as? Decimal else { return nil }
            return NSDecimalNumber(decimal: decimal) as? T
        }
        if T.self == NSNumber.self || T.self == NSNumber?.self {
            return number(value) as? T
        }
        return nil
    }

    /// The objects of a to-many relationship's value (`[ManagedObject]`, `Set<ManagedObject>`),
    /// or `nil` when it is neither.
    private static func objects(_ value: Any?) -> [ManagedObject]? {
        switch value {
        case let ordered as [ManagedObject]: ordered
        case let set as Set<ManagedObject>: Array(set)
        default: nil
        }
    }

    /// A number attribute's value as an `NSNumber`.
    private static func number(_ value: Any) -> NSNumber? {
        switch value {
        case let v as Int16: NSNumber(value: v)
        case let v as Int32: NSNumber(value: v)
        case let v as Int64: NSNumber(value: v)
        case let v as Int: NSNumber(value: v)
        case let v as Double: NSNumber(value: v)
        case let v as Float: NSNumber(value: v)
        case let v as Bool: NSNumber(value: v)
        case let v as Decimal: NSDecimalNumber(decimal: v)
        default: nil
        }
    }

    /// The managed objects of a Foundation collection's elements (`NSSet.allObjects`,
    /// `NSOrderedSet.array`), or `nil` when one is not a managed object.
    static func managedObjects(_ elements: [Any]) -> [ManagedObject]? {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(elements.count)
        for element in elements {
            guard let object = element as? ManagedObject else { return nil }
            objects.append(object)
        }
        return objects
    }
}
