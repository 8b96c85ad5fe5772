internal import StrataStore

/// What turning the history changes of one entity into ``PersistentHistoryChange``s needs,
/// worked out once for a history fetch rather than for every change: the entity's layout, its
/// row values, and the updated properties of each set of changed columns seen.
struct HistoryEntityPlan {
    /// Where the entity's objects live in the engine.
    let layout: EntityLayout
    /// The values of its rows.
    let values: HistoryRowValues
    /// The persistent properties of the entity.
    private let properties: [PropertyDescription]
    /// The properties stored in each set of changed columns seen so far.
    private var updated: [[Int]: Set<PropertyDescription>] = [:]
    /// The entity's to-one relationships that keep a to-many inverse, once worked out
    /// (``PersistentHistoryReader/addInverseToManyOwners(of:store:owners:to:order:plans:)``).
    var inverseToManySides: [InverseToManySide]?

    /// The plan of `entity`, stored as `layout` says, in the store `storeIdentifier`.
    init(
        entity: EntityDescription, layout: EntityLayout, storeIdentifier: String,
        coordinator: PersistentStoreCoordinator
    ) {
        self.layout = layout
        values = HistoryRowValues(
            entity: entity, layout: layout, storeIdentifier: storeIdentifier, coordinator: coordinator)
        properties = entity.properties
    }

    /// The properties stored in `columns` (an update's changed columns).
    mutating func updatedProperties(_ columns: [Int]) -> Set<PropertyDescription> {
        if let known = updated[columns] { return known }
        let layout = layout
        let found = Set(
            properties.filter { property in layout.columns[property.name].map { columns.contains($0) } ?? false })
        updated[columns] = found
        return found
    }
}
