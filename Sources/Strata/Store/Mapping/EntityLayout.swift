/// Where one entity's objects live in the engine.
///
/// A class: faults, fetches and saves look it up for every object, and a copy of a structure
/// of this many tables would count a reference to each.
final class EntityLayout: Sendable {
    /// The engine entity of the entity's inheritance hierarchy.
    let storeEntity: Int
    /// The value of the `_entity` column for objects of exactly this entity.
    let tag: Int64
    /// The tags of this entity and all its sub-entities.
    let tags: [Int64]
    /// The column of each persistent attribute and to-one relationship of the entity (inherited
    /// ones included), by name.
    let columns: [String: Int]
    /// The column of each property of the entity in `properties` order (an object's slots),
    /// or -1 for transient properties and to-many relationships.
    let slotColumns: [Int]
    /// The columns of ``columns`` that rows of entities outside this entity's subtree also
    /// use (a same-named property of a sibling, or one declared by a superentity): a fetch index
    /// lookup on one of them finds those rows too, and their tag tells them apart.
    let sharedColumns: Set<Int>
    /// The join entities of to-many relationships kept in join entities, by relationship name.
    let joins: [String: JoinLayout]

    /// A layout of the given parts.
    init(
        storeEntity: Int, tag: Int64, tags: [Int64], columns: [String: Int], slotColumns: [Int],
        sharedColumns: Set<Int>,
        joins: [String: JoinLayout]
    ) {
        self.storeEntity = storeEntity
        self.tag = tag
        self.tags = tags
        self.columns = columns
        self.slotColumns = slotColumns
        self.sharedColumns = sharedColumns
        self.joins = joins
    }
}
