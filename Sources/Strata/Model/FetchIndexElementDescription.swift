/// One property of a fetch index, with its order (Core Data's `NSFetchIndexElementDescription`).
///
/// Equality and hashing are identity.
///
/// `Sendable` once its model is frozen, like ``PropertyDescription``.
// @unchecked Sendable: every setter traps once the model is frozen (an atomic flag set with
// release ordering after the last write), so a frozen element is immutable and safe to share.
public final class FetchIndexElementDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The indexed property (an attribute or a to-one relationship).
    public private(set) var property: PropertyDescription?

    /// The name of the indexed property.
    public var propertyName: String? { property?.name }

    /// How the index orders values, as passed to ``init(property:collationType:)``.
    public var collationType: FetchIndexElementType {
        willSet { ensureMutable("collationType") }
    }

    /// Whether the index orders values ascending (else descending). The default is `true`.
    public var isAscending: Bool = true {
        willSet { ensureMutable("isAscending") }
    }

    /// The index the element belongs to, set when it is added to a ``FetchIndexDescription``.
    /// Weak: the index owns its elements.
    public internal(set) weak var indexDescription: FetchIndexDescription?

    /// Set when the model is frozen.
    let frozen = FreezeFlag()

    /// Creates an element.
    ///
    /// - Parameters:
    ///   - property: the indexed property.
    ///   - collationType: how the index orders values.
    public init(property: PropertyDescription, collationType: FetchIndexElementType) {
        self.property = property
        self.collationType = collationType
    }

    /// Traps when the model is frozen.
    private func ensureMutable(_ member: String) {
        if frozen.isSet {
            immutableModelViolation("FetchIndexElementDescription.\(member) of index \(indexDescription?.name ?? "?")")
        }
    }

    /// Whether two elements are the same object.
    public static func == (lhs: FetchIndexElementDescription, rhs: FetchIndexElementDescription) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The property name, with `descending` and `rTree` when they apply.
    public var description: String {
        var text = propertyName ?? "?"
        if !isAscending { text += " descending" }
        if collationType == .rTree { text += " rTree" }
        return text
    }
}
