import StrataStore

/// The transaction of a ``BatchInsertRequest``: new rows, and existing rows updated by upserts.
struct BatchInsertion {
    let coordinator: PersistentStoreCoordinator
    let entity: EntityDescription
    let store: PersistentStore
    let policy: MergePolicyType
    private let layout: EntityLayout
    private let columnCount: Int
    private var constraints: BatchConstraints
    /// The rows of the request, by key, with whether each is new.
    private var rows: [PrimaryKey: (row: Row, isNew: Bool)] = [:]
    /// The keys of the rows, in the order the request first wrote them.
    private var order: [PrimaryKey] = []
    private let author: String?
    private let contextName: String?

    init(coordinator: PersistentStoreCoordinator, entity: EntityDescription, policy: MergePolicyType, author: String?, contextName: String?) throws {
        self.coordinator = coordinator
        self.entity = entity
        self.policy = policy
        self.author = author
        self.contextName = contextName
        store = try coordinator.store(for: entity)
        layout = try coordinator.layout(entity)
        columnCount = try coordinator.mapping.get().schema.entities[layout.storeEntity].columns.count
        constraints = try BatchConstraints(coordinator: coordinator, store: store, entity: entity)
    }

    /// The IDs of the objects inserted or upserted, in order.
    var objectIDs: [ManagedObjectID] {
        get throws {
            try order.map { key in
                let entity = try coordinator.concreteEntity(of: rows[key]!.row, storeEntity: layout.storeEntity) ?? entity
                return ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
            }
        }
    }

    /// The transaction writing the rows: upserts update only the columns they change.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store fails.
    func transaction() throws -> Transaction {
        var transaction = Transaction(author: author, contextName: contextName)
        for key in order {
            let (row, isNew) = rows[key]!
            if isNew {
                transaction.insert(layout.storeEntity, key: key, row: row)
            } else if let stored = try coordinator.storeCall({ try store.rows.read(layout.storeEntity, key: key) }) {
                let changed = (1..<columnCount).filter { row[$0] != stored[$0] }
                if !changed.isEmpty { transaction.update(layout.storeEntity, key: key, row: row, changedColumns: changed) }
            }
        }
        return transaction
    }

    /// Adds an object with `values`: defaults for the attributes left out.
    ///
    /// - Throws: ``CoreDataError`` (see ``BatchInsertRequest``).
    mutating func add(_ values: [String: Any]) throws {
        for name in values.keys { _ = try BatchValues.attribute(name, of: entity) }
        var row = Row([Value](repeating: .null, count: columnCount))
        row.values[0] = .int(layout.tag)
        var given: [Int] = [], attributeColumns: [Int] = []
        for (name, attribute) in entity.attributesByName where !attribute.isTransient && !(attribute is DerivedAttributeDescription) {
            guard let column = layout.columns[name] else { continue }
            attributeColumns.append(column)
            row.values[column] = try BatchValues.storeValue(values.keys.contains(name) ? values[name]! : attribute.defaultValue, for: attribute, entity: entity)
            if values.keys.contains(name) { given.append(column) }
        }
        let key = store.rows.allocateKeys(for: layout.storeEntity, count: 1).lowerBound
        guard let existing = try constraints.conflict(for: row, key: key) else {
            write(row, key: key, isNew: true)
            return
        }
        switch policy {
        case .errorMergePolicyType:
            throw CoreDataError(.managedObjectConstraintMerge, "an object of \(entity.name) with the same constrained values exists (key \(existing))")
        case .mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType:
            return
        case .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType:
            let current = try rows[existing] ?? coordinator.storeCall { try store.rows.read(layout.storeEntity, key: existing) }.map { ($0, false) }
            guard var merged = current?.row else { return }
            let columns = policy == .overwriteMergePolicyType ? attributeColumns : given
            for column in columns { merged.values[column] = row.values[column] }
            write(merged, key: existing, isNew: current?.isNew ?? false)
        }
    }

    /// Records `row` under `key`.
    private mutating func write(_ row: Row, key: PrimaryKey, isNew: Bool) {
        if rows[key] == nil { order.append(key) }
        rows[key] = (row, isNew)
        constraints.record(row, key: key)
    }
}
