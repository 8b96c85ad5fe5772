/// An attribute whose value groups several named values, each described by an attribute of
/// its own (Core Data's `NSCompositeAttributeDescription`).
///
/// The value is a dictionary, `[String: Any]`, whose keys are the ``elements``' names and whose
/// values are of their types (an element may itself be a composite, holding a nested
/// dictionary); a missing key is a `nil` element. Setting a dictionary with a key that is no
/// element, or a value that does not fit its element, is refused as for any attribute. The
/// dictionary is stored in one column; predicates read its elements with namespaced key paths
/// (`magnitude.richter > 5`), evaluated on each candidate row.
///
/// `Sendable` once its model is frozen; see ``PropertyDescription``.
// @unchecked Sendable: inherits PropertyDescription's rule (immutable once frozen, every setter
// traps after that); the elements are frozen with their composite.
public final class CompositeAttributeDescription: AttributeDescription, @unchecked Sendable {
    /// The attributes whose values make up the composite's value, in order. The default is empty.
    ///
    /// - Important: Two elements of one name, or setting it once the model is frozen, stop the
    ///   process.
    public var elements: [AttributeDescription] = [] {
        willSet {
            ensureMutable("elements")
            let names = newValue.map(\.name)
            if Set(names).count != names.count {
                fatalError(
                    "Can't set the elements of composite attribute \(qualifiedName): two elements share a name (\(names))"
                )
            }
        }
    }

    /// The elements, by name.
    var elementsByName: [String: AttributeDescription] {
        Dictionary(elements.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Creates a composite attribute with an empty name and no elements.
    public override init() {
        super.init()
        attributeType = .compositeAttributeType
    }

    /// Creates a composite attribute.
    ///
    /// - Parameters:
    ///   - name: the attribute's name.
    ///   - elements: the attributes its value groups.
    public convenience init(name: String, elements: [AttributeDescription]) {
        self.init()
        self.name = name
        self.elements = elements
    }

    override var kindTag: String { "compositeAttribute" }

    override func hashLayoutFacts(into hasher: inout VersionHasher) {
        super.hashLayoutFacts(into: &hasher)
        hasher.combine(elements.count)
        for element in elements { hasher.combine(element.layoutHash) }
    }

    override func freezeParts() {
        for element in elements {
            element.frozen.set()
            element.freezeParts()
        }
    }
}
