import Foundation
import OrderedCollections

/// Compares property values as fetches do: numbers across integer, floating-point, decimal and
/// Boolean types, strings with or without case and diacritics, dates, UUIDs, URLs, data,
/// collections element by element, and objects or IDs by identity.
enum FetchValue {
    /// A number of any Swift or Foundation numeric type, kept exact.
    enum Number {
        case integer(Int64)
        case unsigned(UInt64)
        case floating(Double)
        case decimal(Decimal)

        /// The number as a Double (possibly rounded).
        var doubleValue: Double {
            switch self {
            case .integer(let value): Double(value)
            case .unsigned(let value): Double(value)
            case .floating(let value): value
            case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
            }
        }

        /// The number as an `Int`, when it is an integer that fits.
        var integerValue: Int? {
            switch self {
            case .integer(let value): Int(exactly: value)
            case .unsigned(let value): Int(exactly: value)
            case .floating(let value): Int(exactly: value)
            case .decimal(let value): Int(exactly: NSDecimalNumber(decimal: value).doubleValue)
            }
        }

        /// The number as a Swift value: `Int` when it fits, else `UInt64`, `Double` or `Decimal`.
        var value: Any {
            switch self {
            case .integer(let value): Int(value)
            case .unsigned(let value): value
            case .floating(let value): value
            case .decimal(let value): value
            }
        }

        /// The number as a Decimal, `nil` for NaN.
        var decimalValue: Decimal? {
            switch self {
            case .integer(let value): Decimal(value)
            case .unsigned(let value): Decimal(value)
            case .floating(let value): value.isNaN ? nil : Decimal(value)
            case .decimal(let value): value.isNaN ? nil : value
            }
        }

        /// The number as a 128-bit integer, for the integer cases.
        var wideInteger: Int128? {
            switch self {
            case .integer(let value): Int128(value)
            case .unsigned(let value): Int128(value)
            case .floating, .decimal: nil
            }
        }
    }

    /// The value as a number, when it is one (Booleans are 0 and 1, as `NSNumber`s are).
    static func numeric(_ value: Any) -> Number? {
        if isObject(value) {
            if let decimal = value as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
            guard let number = value as? NSNumber else { return nil }
            switch String(cString: number.objCType) {
            case "d", "f": return .floating(number.doubleValue)
            case "Q", "L", "I": return .unsigned(number.uint64Value)
            default: return .integer(number.int64Value)
            }
        }
        // The common constants first: a cast to a concrete type compares metadata, where a cast
        // to a protocol looks the conformance up (thousands of instructions when it fails).
        if let integer = value as? Int64 { return .integer(integer) }
        if let integer = value as? Int { return .integer(Int64(integer)) }
        if let floating = value as? Double { return .floating(floating) }
        if let boolean = value as? Bool { return .integer(boolean ? 1 : 0) }
        return (value as? FetchNumeric)?.fetchNumber
    }

    /// Whether `value` is a class instance. Casting a Swift value to a Foundation class bridges it
    /// (a dictionary becomes an `NSDictionary`), so Foundation casts are made on objects only.
    @inline(__always)
    static func isObject(_ value: Any) -> Bool { type(of: value) is AnyObject.Type }

    /// The value as a Double, when it is a number.
    static func number(_ value: Any) -> Double? { numeric(value)?.doubleValue }

    /// The value with optionals flattened and `NSNull` made `nil`.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value, let plain = OptionalUnwrapper.unwrap(value) else { return nil }
        if isObject(plain) && plain is NSNull { return nil }
        return plain
    }

    /// The elements of a collection value (array, set, ordered set, `NSArray`, `NSSet`), `nil`
    /// for anything else, strings, data and dictionaries included.
    static func elements(of value: Any) -> [Any?]? {
        if isObject(value) {
            switch value {
            case is ManagedObject, is ManagedObjectID: return nil
            case let array as NSArray: return array.map(unwrap)
            case let set as NSSet: return set.map(unwrap)
            default: return nil
            }
        }
        switch value {
        case is String, is Data, is [String: Any]: return nil
        case let collection as PredicateCollection: return collection.predicateElements
        case let array as [Any]: return array.map(unwrap)
        case let set as Set<AnyHashable>: return set.map { unwrap($0.base) }
        default: return nil
        }
    }

    /// Whether a collection value has no order (a set).
    private static func isUnordered(_ value: Any) -> Bool {
        value is Set<AnyHashable> || (isObject(value) && value is NSSet)
    }

    /// The ID a relationship value names.
    static func objectID(_ value: Any) -> ManagedObjectID? {
        guard isObject(value) else { return nil }
        return (value as? ManagedObjectID) ?? (value as? ManagedObject)?.objectID
    }

    /// `string` without case and/or diacritics, as `options` ask.
    static func fold(_ string: String, _ options: ComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? string : string.folding(options: folding, locale: nil)
    }

    /// Whether two values are equal; strings are compared under `options`.
    static func equal(_ lhs: Any?, _ rhs: Any?, options: ComparisonOptions = []) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (left?, right?):
            if let a = left as? String, let b = right as? String {
                return a == b || (!options.isEmpty && fold(a, options) == fold(b, options))
            }
            if let a = numeric(left) {
                guard let b = numeric(right) else { return false }
                return compareNumbers(a, b) == .orderedSame
            }
            if let a = objectID(left) {
                guard let b = objectID(right) else { return false }
                return a == b
            }
            if let a = elements(of: left) {
                guard let b = elements(of: right), a.count == b.count else { return false }
                guard isUnordered(left) || isUnordered(right) else {
                    return zip(a, b).allSatisfy { equal($0, $1, options: options) }
                }
                var unmatched = b
                for element in a {
                    guard let index = unmatched.firstIndex(where: { equal(element, $0, options: options) }) else {
                        return false
                    }
                    unmatched.remove(at: index)
                }
                return true
            }
            // Entities compare by name and version hash, as a store compares their IDs: an
            // entity from another copy of the model (`Employee.entity()`) names the same one.
            if let a = left as? EntityDescription, let b = right as? EntityDescription {
                return a === b || (a.entityName == b.entityName && a.versionHash == b.versionHash)
            }
            if let a = left as? AnyHashable, let b = right as? AnyHashable { return a == b }
            return false
        }
    }

    /// Orders two values of one kind (numbers, strings under `options`, dates, UUIDs, URLs, data,
    /// objects by ID); `nil` when they cannot be ordered (different kinds, NaN).
    static func order(_ left: Any, _ right: Any, options: ComparisonOptions = []) -> ComparisonResult? {
        // Two Swift strings first, told by their type alone: a string is no number, and the
        // number casts below fail on it only after a conformance lookup.
        if type(of: left) == String.self, type(of: right) == String.self {
            return order(strings: left as! String, right as! String, options: options)
        }
        if let a = numeric(left) {
            guard let b = numeric(right) else { return nil }
            return compareNumbers(a, b)
        }
        if let a = left as? String, let b = right as? String { return order(strings: a, b, options: options) }
        if let a = left as? Date, let b = right as? Date {
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        if let a = left as? UUID, let b = right as? UUID { return order(a.uuidString, b.uuidString) }
        if let a = left as? URL, let b = right as? URL { return order(a.absoluteString, b.absoluteString) }
        if let a = left as? Data, let b = right as? Data {
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        }
        if let a = objectID(left), let b = objectID(right) {
            return a == b ? .orderedSame : order(a.description, b.description)
        }
        // Any other Comparable type against a value of the same type (history tokens).
        if let a = left as? any Comparable { return orderComparable(a, right) }
        return nil
    }

    /// Orders two strings, folded by `options`.
    private static func order(strings left: String, _ right: String, options: ComparisonOptions) -> ComparisonResult {
        let x = fold(left, options), y = fold(right, options)
        return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
    }

    /// Orders `left` and `right` when `right` has `left`'s type.
    private static func orderComparable<T: Comparable>(_ left: T, _ right: Any) -> ComparisonResult? {
        guard let right = right as? T else { return nil }
        return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
    }

    /// Orders two numbers exactly (a 64-bit integer against a Double without rounding); `nil` with NaN.
    static func compareNumbers(_ a: Number, _ b: Number) -> ComparisonResult? {
        func result<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
            x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        func integer(_ x: Int128, against y: Double) -> ComparisonResult? {
            guard !y.isNaN else { return nil }
            let truncated = y.rounded(.towardZero)
            guard abs(truncated) < 1e38 else { return y > 0 ? .orderedAscending : .orderedDescending }
            let whole = Int128(truncated)
            if x != whole { return result(x, whole) }
            return y > truncated ? .orderedAscending : y < truncated ? .orderedDescending : .orderedSame
        }
        switch (a, b) {
        case (.decimal, _), (_, .decimal):
            guard let x = a.decimalValue, let y = b.decimalValue else { return nil }
            return result(x, y)
        case (.floating(let x), .floating(let y)):
            return x.isNaN || y.isNaN ? nil : result(x, y)
        case (.floating(let x), _):
            return integer(b.wideInteger!, against: x).map {
                $0 == .orderedAscending
                    ? .orderedDescending : $0 == .orderedDescending ? .orderedAscending : .orderedSame
            }
        case (_, .floating(let y)):
            return integer(a.wideInteger!, against: y)
        default:
            return result(a.wideInteger!, b.wideInteger!)
        }
    }

    /// Orders two values for sorting: `nil` before everything, then by ``order(_:_:options:)``;
    /// values that cannot be ordered compare the same.
    static func compare(_ lhs: Any?, _ rhs: Any?, caseInsensitive: Bool = false) -> ComparisonResult {
        switch (lhs, rhs) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (left?, right?):
            return order(left, right, options: caseInsensitive ? .caseInsensitive : []) ?? .orderedSame
        }
    }
}

/// A collection type predicates see through (to-many relationship storage).
protocol PredicateCollection {
    /// The elements.
    var predicateElements: [Any?] { get }
}

extension OrderedSet: PredicateCollection {
    var predicateElements: [Any?] { map { FetchValue.unwrap($0) } }
}

/// A Swift numeric type (or `Bool`, as 0 and 1) predicates compare as a number: one protocol
/// cast instead of one cast per type.
private protocol FetchNumeric {
    var fetchNumber: FetchValue.Number { get }
}

extension Int: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension Int64: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(self) } }
extension Int32: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension Int16: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension Int8: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension UInt: FetchNumeric { var fetchNumber: FetchValue.Number { .unsigned(UInt64(self)) } }
extension UInt64: FetchNumeric { var fetchNumber: FetchValue.Number { .unsigned(self) } }
extension UInt32: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension UInt16: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension UInt8: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(Int64(self)) } }
extension Double: FetchNumeric { var fetchNumber: FetchValue.Number { .floating(self) } }
extension Float: FetchNumeric { var fetchNumber: FetchValue.Number { .floating(Double(self)) } }
extension Bool: FetchNumeric { var fetchNumber: FetchValue.Number { .integer(self ? 1 : 0) } }
extension Decimal: FetchNumeric { var fetchNumber: FetchValue.Number { .decimal(self) } }
