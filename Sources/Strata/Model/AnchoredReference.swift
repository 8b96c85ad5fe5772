/// A reference that reads `nil` once its target is gone, as a weak reference does, but is weak
/// to the target's ``ReferenceAnchor``, not to the target: what a property, an index and a
/// sub-entity keep of their entity, and a relationship of its destination and its inverse.
///
/// A weak reference to the target itself would give the target a side table, through which
/// every retain and release of it goes: an entity's for each object ID, each object insert and
/// each relationship change; a relationship's for each change of it and of its inverse.
struct AnchoredReference<Target: AnyObject> {
    /// The anchor of the target, while it lives.
    private weak var anchor: ReferenceAnchor<Target>?

    /// A reference to the target of `anchor` (none for `nil`).
    init(_ anchor: ReferenceAnchor<Target>?) {
        self.anchor = anchor
    }

    /// The target, or `nil` once it is gone.
    var target: Target? { anchor?.target }
}

/// The object ``AnchoredReference``s to a target point at, held by the target alone, so that it
/// lives exactly as long as the target; it points back at the target until the target's
/// `deinit` clears it.
// @unchecked Sendable: `target` is written in the target's initializer, before the target is
// shared, and in its deinitializer, after which no thread reaches the target.
final class ReferenceAnchor<Target: AnyObject>: @unchecked Sendable {
    /// The target, until it is deinitialized.
    unowned(unsafe) var target: Target?

    /// An anchor not pointing at a target yet.
    init() {}
}
