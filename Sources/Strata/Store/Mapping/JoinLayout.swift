/// A join entity holding the pairs of a to-many relationship.
struct JoinLayout: Sendable {
    /// The engine entity.
    let storeEntity: Int
    /// Whether the relationship's owner is in the `source` column (else in `target`).
    let isSource: Bool
    /// Whether the relationship keeps an order (in the `position` column).
    let isOrdered: Bool
    /// Whether saves write the pairs from this side: the ordered side of a many-to-many
    /// relationship ordered on one side only (so `position` holds its order), else the source.
    let writesPairs: Bool

    /// The column holding the relationship's owner.
    var ownerColumn: Int { isSource ? 0 : 1 }
    /// The column holding the related object.
    var otherColumn: Int { isSource ? 1 : 0 }
}
