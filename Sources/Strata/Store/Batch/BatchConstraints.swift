internal import StrataStore

/// Finds the rows that share the values of a uniqueness constraint with rows a batch request
/// writes: stored rows (through ``UniquenessLookup``), and rows written earlier in the same
/// request.
struct BatchConstraints {
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    /// The rows' entity.
    let entity: EntityDescription
    let layout: EntityLayout
    /// The constraints of the entity and its superentities, as columns, with the declaring entity.
    private let constraints: [(owner: EntityDescription, columns: [Int])]
    /// The key of the row the request writes with each constraint's values.
    private var written: [[Value]: PrimaryKey] = [:]

    init(coordinator: PersistentStoreCoordinator, store: PersistentStore, entity: EntityDescription) throws {
        self.coordinator = coordinator
        self.store = store
        self.entity = entity
        let layout = try coordinator.layout(entity)
        self.layout = layout
        constraints = ManagedObjectContext.uniquenessConstraints(of: entity).compactMap { owner, names in
            let columns = names.compactMap { layout.columns[$0] }
            return columns.count == names.count ? (owner, columns) : nil
        }
    }

    /// Whether the entity has no uniqueness constraint (no row can conflict).
    var isEmpty: Bool { constraints.isEmpty }

    /// Whether a constraint includes one of `columns`.
    func constrains(_ columns: some Sequence<Int>) -> Bool {
        columns.contains { column in constraints.contains { $0.columns.contains(column) } }
    }

    /// The key of another row with the constrained values of `row`: one written earlier by the
    /// request, else a stored one (other than `key` and the rows in `rewritten`, whose stored
    /// values the request replaces).
    func conflict(for row: Row, key: PrimaryKey, rewritten: Set<PrimaryKey> = []) throws -> PrimaryKey? {
        for (index, values) in constrainedValues(of: row) {
            if let earlier = written[[.int(Int64(index))] + values], earlier != key { return earlier }
            if let stored = try stored(values, constraints[index], excluding: rewritten.union([key])) { return stored }
        }
        return nil
    }

    /// Records that the request writes `row` under `key`.
    mutating func record(_ row: Row, key: PrimaryKey) {
        for (index, values) in constrainedValues(of: row) { written[[.int(Int64(index))] + values] = key }
    }

    /// The values of `row` for each constraint none of whose values is `nil`, by constraint position.
    private func constrainedValues(of row: Row) -> [(Int, [Value])] {
        constraints.enumerated().compactMap { index, constraint in
            let values = constraint.columns.map { row[$0] }
            return values.contains(.null) ? nil : (index, values)
        }
    }

    /// A stored row of the constraint's owner (or a sub-entity) whose constrained columns hold
    /// `values` (``UniquenessLookup``).
    private func stored(
        _ values: [Value], _ constraint: (owner: EntityDescription, columns: [Int]), excluding: Set<PrimaryKey>
    ) throws -> PrimaryKey? {
        try UniquenessLookup(store: store, coordinator: coordinator, storeEntity: layout.storeEntity)
            .firstRow(of: constraint.owner, columns: constraint.columns, values: values, excluding: excluding)?.key
    }
}
