import Foundation

/// Compares property values as fetches do: numbers across integer and floating types, strings,
/// dates, Booleans, UUIDs, URLs, data, and objects or IDs by identity.
enum FetchValue {
    /// The value as a Double, when it is a number.
    static func number(_ value: Any) -> Double? {
        switch value {
        case let v as Int: return Double(v)
        case let v as Int64: return Double(v)
        case let v as Int32: return Double(v)
        case let v as Int16: return Double(v)
        case let v as Int8: return Double(v)
        case let v as UInt: return Double(v)
        case let v as UInt64: return Double(v)
        case let v as UInt32: return Double(v)
        case let v as UInt16: return Double(v)
        case let v as UInt8: return Double(v)
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    /// The ID a relationship value names.
    static func objectID(_ value: Any) -> ManagedObjectID? {
        (value as? ManagedObjectID) ?? (value as? ManagedObject)?.objectID
    }

    /// Whether two values are equal.
    static func equal(_ lhs: Any?, _ rhs: Any?, caseInsensitive: Bool = false) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (left?, right?):
            if let a = number(left), let b = number(right) { return a == b }
            if let a = objectID(left), let b = objectID(right) { return a == b }
            if let a = left as? String, let b = right as? String {
                return caseInsensitive ? a.caseInsensitiveCompare(b) == .orderedSame : a == b
            }
            if let a = left as? AnyHashable, let b = right as? AnyHashable { return a == b }
            return false
        }
    }

    /// Orders two values: `nil` before everything, then numbers, strings, dates, … by their order.
    static func compare(_ lhs: Any?, _ rhs: Any?, caseInsensitive: Bool = false) -> ComparisonResult {
        switch (lhs, rhs) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (left?, right?):
            if let a = number(left), let b = number(right) { return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame }
            if let a = left as? String, let b = right as? String {
                return caseInsensitive ? a.caseInsensitiveCompare(b) : (a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame)
            }
            if let a = left as? Date, let b = right as? Date { return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame }
            if let a = left as? Bool, let b = right as? Bool { return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending) }
            if let a = left as? UUID, let b = right as? UUID { return compare(a.uuidString, b.uuidString) }
            if let a = left as? URL, let b = right as? URL { return compare(a.absoluteString, b.absoluteString) }
            if let a = left as? Data, let b = right as? Data {
                return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
            }
            if let a = objectID(left), let b = objectID(right) { return compare(a.description, b.description) }
            return .orderedSame
        }
    }
}
