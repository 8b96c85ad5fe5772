/// The yes-or-no state of a ``ManagedObject``, one bit each, so that all of it takes one byte
/// of the object.
struct ObjectFlags: OptionSet {
    let rawValue: UInt8

    /// ``ManagedObject/isInserted``.
    static let inserted = Self(rawValue: 1 << 0)
    /// ``ManagedObject/isDeleted``.
    static let deleted = Self(rawValue: 1 << 1)
    /// ``ManagedObject/isLoaded``.
    static let loaded = Self(rawValue: 1 << 2)
    /// ``ManagedObject/isInaccessible``.
    static let inaccessible = Self(rawValue: 1 << 3)
    /// ``ManagedObject/hasAwokenFromInsert``.
    static let awokenFromInsert = Self(rawValue: 1 << 4)

    /// Sets `flag` when `isOn`, else clears it.
    mutating func set(_ flag: Self, _ isOn: Bool) {
        if isOn { insert(flag) } else { remove(flag) }
    }
}
