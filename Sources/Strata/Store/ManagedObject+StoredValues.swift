import Foundation
internal import StrataStore

extension ManagedObject {
    /// The value of the plain attribute in `slot` as `T` (what the getter `@Managed` generates
    /// reads): straight from the row the object holds when it has not decoded the slot, typed
    /// without going through `Any`; else the slot's value, cast as ``ManagedValueCast/cast(_:to:key:)``
    /// casts it.
    ///
    /// - Throws: what reading the slot's value throws.
    @inline(__always)
    func typedPlainValue<T>(_ slot: Int, as _: T.Type, key: String) throws -> T {
        if let stored = lazyPlainValue(slot) { return ManagedValueCast.cast(stored: stored, to: T.self, key: key) }
        return ManagedValueCast.cast(try publicValue(slot), to: T.self, key: key)
    }

    /// The stored value of the plain attribute in `slot` from ``lazyRow``, when the object
    /// holds a row that has not decoded the slot (else `nil`): what ``decodeLazySlot(_:)``
    /// would return, before it is made an `Any`.
    private func lazyPlainValue(_ slot: Int) -> StrataStore.Value? {
        guard lazyRow != nil, runtime.loads[slot] == .plain else { return nil }
        // Read in place: a copy of the row out of the object would retain and release its four
        // references, twice as many atomic operations as the rest of a read.
        return Self.plainValue(slot, of: &lazyRow!)
    }

    /// The stored value of the plain attribute in `slot` from `lazy`, unless the slot was decoded.
    private static func plainValue(_ slot: Int, of lazy: inout LazyRow) -> StrataStore.Value? {
        guard !lazy.isDecoded(slot, load: .plain) else { return nil }
        let column = lazy.layout.slotColumns[slot]
        return column >= 0 ? lazy.row[column] : nil
    }
}

extension ManagedValueCast {
    /// The attribute value `stored` as `T`: a value whose payload is exactly `T` without a
    /// dynamic cast and without making an `Any`, any other as ``cast(_:to:key:)`` converts
    /// its plain value.
    static func cast<T>(stored: StrataStore.Value, to _: T.Type, key: String) -> T {
        switch stored {
        case .string(let value) where T.self == String.self: return unsafeBitCast(value, to: T.self)
        case .int(let value) where T.self == Int64.self: return unsafeBitCast(value, to: T.self)
        case .bool(let value) where T.self == Bool.self: return unsafeBitCast(value, to: T.self)
        case .double(let value) where T.self == Double.self: return unsafeBitCast(value, to: T.self)
        case .date(let value) where T.self == Date.self: return unsafeBitCast(value, to: T.self)
        default: return cast(ValueConversion.plainValue(stored), to: T.self, key: key)
        }
    }
}
