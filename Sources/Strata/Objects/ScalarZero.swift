import Foundation

/// The zero of the scalar attribute types, which Core Data's scalar accessors return for `nil`.
enum ScalarZero {
    /// 0 (or `false`) as `T` when `T` is a number or `Bool` type of the model; `nil` otherwise.
    static func zero<T>(of type: T.Type) -> T? {
        switch type {
        case is Int16.Type: Int16(0) as? T
        case is Int32.Type: Int32(0) as? T
        case is Int64.Type: Int64(0) as? T
        case is Int.Type: Int(0) as? T
        case is Double.Type: Double(0) as? T
        case is Float.Type: Float(0) as? T
        case is Decimal.Type: Decimal(0) as? T
        case is Bool.Type: false as? T
        default: nil
        }
    }
}
