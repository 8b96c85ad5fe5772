/// A reference to an entity that reads `nil` once the entity is gone, as a weak reference does,
/// but is weak to the entity's ``EntityAnchor``, not to the entity: what a property, an index
/// and a sub-entity keep of their entity, and a relationship of its destination.
///
/// A weak reference to the entity itself would give the entity a side table, through which
/// every retain and release of the entity goes: each object ID's, each object insert's and
/// each relationship change's, an atomic on one shared word from every thread.
struct WeakEntity {
    /// The anchor of the entity, while it lives.
    private weak var anchor: EntityAnchor?

    /// A reference to `entity` (none for `nil`).
    init(_ entity: EntityDescription?) {
        anchor = entity?.anchor
    }

    /// The entity, or `nil` once it is gone.
    var entity: EntityDescription? { anchor?.entity }
}

/// The object weak references to an entity point at (``WeakEntity``), held by the entity alone,
/// so that it lives exactly as long as the entity; it points back at the entity until the
/// entity's `deinit` clears it.
// @unchecked Sendable: `entity` is written in the entity's initializer, before the entity is
// shared, and in its deinitializer, after which no thread reaches the entity.
final class EntityAnchor: @unchecked Sendable {
    /// The entity, until it is deinitialized.
    unowned(unsafe) var entity: EntityDescription?

    /// An anchor not pointing at an entity yet.
    init() {}
}
