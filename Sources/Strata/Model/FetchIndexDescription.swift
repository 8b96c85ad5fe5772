/// A fetch index of an entity: an index the store keeps over one or more of its properties so
/// that predicates and sorts on them do not scan every object (Core Data's
/// `NSFetchIndexDescription`).
///
/// Equality and hashing are identity.
///
/// `Sendable` once its model is frozen, like ``PropertyDescription``.
// @unchecked Sendable: every setter traps once the model is frozen (an atomic flag set with
// release ordering after the last write), so a frozen index is immutable and safe to share.
public final class FetchIndexDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The index's name, unique within its entity.
    public var name: String {
        willSet { ensureMutable("name") }
    }

    /// The indexed properties, most significant first. Setting it sets each element's
    /// ``FetchIndexElementDescription/indexDescription``.
    public var elements: [FetchIndexElementDescription] {
        willSet { ensureMutable("elements") }
        didSet {
            for element in oldValue where element.indexDescription === self { element.indexDescription = nil }
            for element in elements { element.indexDescription = self }
        }
    }

    /// The entity whose ``EntityDescription/indexes`` holds the index; `nil` before it is added.
    /// Weak (``AnchoredReference``): the entity owns its indexes.
    public internal(set) var entity: EntityDescription? {
        get { entityReference.target }
        set { entityReference = AnchoredReference(newValue?.anchor) }
    }
    /// The storage of ``entity``.
    private var entityReference = AnchoredReference<EntityDescription>(nil)

    /// Set when the model is frozen.
    let frozen = FreezeFlag()

    /// Creates an index.
    ///
    /// - Parameters:
    ///   - name: the index's name.
    ///   - elements: the indexed properties, most significant first; `nil` for none.
    public init(name: String, elements: [FetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        for element in self.elements { element.indexDescription = self }
    }

    /// Marks the index and its elements frozen.
    func freeze() {
        for element in elements { element.frozen.set() }
        frozen.set()
    }

    /// Traps when the model is frozen.
    private func ensureMutable(_ member: String) {
        if frozen.isSet {
            immutableModelViolation("FetchIndexDescription.\(member) of \(entity?.entityName ?? "?").\(name)")
        }
    }

    /// Whether two indexes are the same object.
    public static func == (lhs: FetchIndexDescription, rhs: FetchIndexDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The name and elements, such as `byDepartmentSalary(department, salary descending)`.
    public var description: String {
        "\(name)(\(elements.map(\.description).joined(separator: ", ")))"
    }
}
