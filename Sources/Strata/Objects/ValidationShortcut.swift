/// How ``ManagedObject/validateProperties()`` tells, without converting a slot's value to what
/// `value(forKey:)` returns, that the model's checks (``ManagedObject/validateAgainstModel(_:forKey:)``)
/// pass it. Used only when the object's class does not override `validateValue(_:forKey:)`
/// (``ValidateValueOverride``); a value the shortcut cannot pass goes through the full check,
/// which reports the error.
enum ValidationShortcut {
    /// An attribute with no minimum, maximum, regular expression or validation predicate: a value of exactly the Swift
    /// type its slot holds passes, and `nil` passes when `nilPasses` (optional or transient).
    case exactType(ObjectIdentifier, nilPasses: Bool)
    /// A to-one relationship with no validation predicate: a related object passes, and `nil` passes when `nilPasses` (optional).
    case toOne(nilPasses: Bool)
    /// Every value goes through the full check.
    case none

    /// The shortcut of `property`, whose slot holds values of `exactType` (``EntityRuntime/exactTypes``)
    /// and whose values are checked against a range or pattern when `checksValues`.
    init(_ property: PropertyDescription, exactType: ObjectIdentifier?, checksValues: Bool) {
        if !property.validationPredicates.isEmpty {
            self = .none
        } else if let attribute = property as? AttributeDescription {
            guard let exactType, !checksValues else {
                self = .none
                return
            }
            self = .exactType(exactType, nilPasses: attribute.isOptional || attribute.isTransient)
        } else if let relationship = property as? RelationshipDescription, !relationship.isToMany {
            self = .toOne(nilPasses: relationship.isOptional)
        } else {
            self = .none
        }
    }
}

extension ManagedObject {
    /// Whether `slot`'s value surely passes the model's checks, told from the stored value; the
    /// object is loaded and has no lazily decoded row.
    func passesValidationShortcut(_ slot: Int) -> Bool {
        switch runtime.validationShortcuts[slot] {
        case .none:
            return false
        case .exactType(let type, let nilPasses):
            guard let stored = storedType(slot) else { return nilPasses }
            return stored == type
        case .toOne(let nilPasses):
            return nilPasses || slots[slot] != nil
        }
    }

    /// The type of the value `slot` holds, `nil` for none, read in place from the slot's
    /// existential container (a `type(of:)` of the value would copy it out first, and with it
    /// retain a string's storage: ~10% of `validateProperties` in strata-graph-bench W1). The
    /// container of an `Any?` keeps the value's type metadata in its fourth word, zero for `nil`
    /// (the Swift ABI's existential layout); for the value types a shortcut names
    /// (``ValueConversion/exactType(of:)``) that is the value's dynamic type.
    /// `TypedValueStorageTests.theTypeASlotHoldsIsReadInPlace` checks it against `type(of:)`.
    func storedType(_ slot: Int) -> ObjectIdentifier? {
        slots.withUnsafeBufferPointer { buffer in
            precondition(buffer.indices.contains(slot), "slot \(slot) is not one of the object's \(buffer.count)")
            return UnsafeRawPointer(buffer.baseAddress! + slot)
                .load(fromByteOffset: 3 * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer?.self)
                .map { ObjectIdentifier(unsafeBitCast($0, to: Any.Type.self)) }
        }
    }
}
