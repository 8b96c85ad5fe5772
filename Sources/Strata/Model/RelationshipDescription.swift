import Foundation

/// A relationship of an entity: a property whose values are other managed objects (Core Data's
/// `NSRelationshipDescription`).
///
/// A to-one relationship has ``maxCount`` 1; a to-many one has ``maxCount`` 0 (no limit) or a
/// limit above 1. Set ``inverseRelationship`` on both sides: Core Data (and Strata) keep the two
/// sides of a relationship consistent through it.
///
/// `Sendable` once its model is frozen; see ``PropertyDescription``.
// @unchecked Sendable: inherits PropertyDescription's rule (immutable once frozen, every setter
// traps after that).
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    /// The entity of the objects the relationship refers to. The default is `nil`.
    ///
    /// The reference is weak (``AnchoredReference``): the model owns its entities.
    public var destinationEntity: EntityDescription? {
        get { destinationReference.target }
        set {
            ensureMutable("destinationEntity")
            destinationReference = AnchoredReference(newValue?.anchor)
        }
    }
    /// The storage of ``destinationEntity``.
    private var destinationReference = AnchoredReference<EntityDescription>(nil)

    /// The relationship of the destination entity that points back, if any. The default is `nil`.
    ///
    /// Setting it does not set the other side's; set both. The reference is weak
    /// (``AnchoredReference``): entities own their relationships.
    public var inverseRelationship: RelationshipDescription? {
        get { inverseReference.target }
        set {
            ensureMutable("inverseRelationship")
            inverseReference = AnchoredReference(newValue?.anchor)
        }
    }
    /// The storage of ``inverseRelationship``.
    private var inverseReference = AnchoredReference<RelationshipDescription>(nil)

    /// The fewest objects the relationship may hold when it is not empty. The default is 0.
    public var minCount: Int = 0 {
        willSet { ensureMutable("minCount") }
    }

    /// The most objects the relationship may hold: 1 for a to-one relationship, 0 for no limit.
    /// The default is 1.
    public var maxCount: Int = 1 {
        willSet { ensureMutable("maxCount") }
    }

    /// Whether the relationship is to-many (``maxCount`` is not 1).
    public var isToMany: Bool { maxCount != 1 }

    /// Whether a to-many relationship keeps its objects in order (an ordered set). The default is
    /// `false`.
    public var isOrdered: Bool = false {
        willSet { ensureMutable("isOrdered") }
    }

    /// What deleting the source object does to the destination objects. The default is
    /// ``DeleteRule/nullifyDeleteRule``.
    public var deleteRule: DeleteRule = .nullifyDeleteRule {
        willSet { ensureMutable("deleteRule") }
    }

    /// What the relationship's inverse refers to it through (``AnchoredReference``).
    let anchor = ReferenceAnchor<RelationshipDescription>()

    /// Creates a to-one relationship with an empty name and no destination.
    public override init() {
        super.init()
        anchor.target = self
    }

    deinit {
        anchor.target = nil
    }

    override var kindTag: String { "relationship" }

    override func hashLayoutFacts(into hasher: inout VersionHasher) {
        super.hashLayoutFacts(into: &hasher)
        hasher.combine(destinationEntity?.entityName)
        hasher.combine(inverseRelationship?.name)
        hasher.combine(minCount)
        hasher.combine(maxCount)
        hasher.combine(isOrdered)
    }
}
