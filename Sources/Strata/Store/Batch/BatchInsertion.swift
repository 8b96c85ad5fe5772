import Foundation
internal import StrataStore

/// The commit of a ``BatchInsertRequest``: new rows, and existing rows updated by upserts.
///
/// Rows are made straight from the dictionaries: each stored attribute's value is looked up once
/// and converted to its column, with the keys of the new rows allocated as one block. Without
/// uniqueness constraints (every object a new row) each row is made as the store encodes it
/// (``InsertedRows``), on every core for a large request; with them, the rows are made first
/// and merged into each other or into stored rows as the merge policy says.
struct BatchInsertion {
    /// A stored attribute a dictionary may set, with its column and the stored form of its
    /// default value (`nil` when the default does not convert: a required attribute without one).
    ///
    /// A row is made from the column's plain fields (``type``, ``column``, ``hasDefault``): the
    /// parts making rows at once would otherwise retain the same attribute object for every
    /// row, and contended reference counts took half of their time (`perf` of
    /// strata-graph-bench B1).
    private struct Column {
        var name: String
        var attribute: AttributeDescription
        var type: AttributeType
        var column: Int
        var defaultValue: Value?
        var hasDefault: Bool
    }

    let coordinator: PersistentStoreCoordinator
    let entity: EntityDescription
    let store: PersistentStore
    let policy: MergePolicyType
    private let layout: EntityLayout
    private let columnCount: Int
    private let columns: [Column]
    /// The row of an object that gives no value: the entity's tag, each attribute's default
    /// (`null` for a required attribute without one, which must be given).
    private let template: Row
    /// How many of ``columns`` have no ``Column/defaultValue``.
    private let withoutDefault: Int
    private var constraints: BatchConstraints
    /// The rows of the request, in the order it first wrote them, with whether each is new,
    /// kept when the entity has uniqueness constraints (an upsert merges into a row written earlier).
    private var rows: [(key: PrimaryKey, row: Row, isNew: Bool)] = []
    /// The keys of the rows inserted when the entity has no uniqueness constraints, in order.
    private var insertedKeys: Range<PrimaryKey> = 0..<0
    /// The position in ``rows`` of each key, kept only when the entity has uniqueness
    /// constraints (an upsert merges into a row written earlier).
    private var positions: [PrimaryKey: Int] = [:]
    /// Keys allocated for new rows and not handed out yet.
    private var freeKeys: Range<PrimaryKey> = 0..<0
    private let author: String?
    private let contextName: String?

    /// Prepares the insertion of about `count` objects.
    init(
        coordinator: PersistentStoreCoordinator, entity: EntityDescription, policy: MergePolicyType, author: String?,
        contextName: String?, count: Int
    ) throws {
        self.coordinator = coordinator
        self.entity = entity
        self.policy = policy
        self.author = author
        self.contextName = contextName
        store = try coordinator.store(for: entity)
        let layout = try coordinator.layout(entity)
        self.layout = layout
        columnCount = try coordinator.mapping.get().schema.entities[layout.storeEntity].columns.count
        columns = entity.attributesByName.compactMap { name, attribute in
            guard !attribute.isTransient, !(attribute is DerivedAttributeDescription), let column = layout.columns[name]
            else { return nil }
            let defaultValue = try? BatchValues.storeValue(attribute.defaultValue, for: attribute, entity: entity)
            return Column(
                name: name, attribute: attribute, type: attribute.attributeType, column: column,
                defaultValue: defaultValue,
                hasDefault: defaultValue != nil)
        }.sorted { $0.column < $1.column }
        var template = Row([Value](repeating: .null, count: columnCount))
        template.values[0] = .int(layout.tag)
        for column in columns { template.values[column.column] = column.defaultValue ?? .null }
        self.template = template
        withoutDefault = columns.count { !$0.hasDefault }
        constraints = try BatchConstraints(coordinator: coordinator, store: store, entity: entity)
        if !constraints.isEmpty { rows.reserveCapacity(count) }
        if count > 0 {
            let keys = store.rows.allocateKeys(for: layout.storeEntity, count: count)
            freeKeys = keys.lowerBound..<(keys.upperBound + 1)
        }
    }

    /// The number of objects inserted or upserted.
    var count: Int { constraints.isEmpty ? insertedKeys.count : rows.count }

    /// The IDs of the objects inserted or upserted, in order.
    var objectIDs: [ManagedObjectID] {
        get throws {
            if constraints.isEmpty {
                return insertedKeys.map {
                    ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: $0)
                }
            }
            return try rows.map { key, row, isNew in
                let entity =
                    isNew ? entity : try coordinator.concreteEntity(of: row, storeEntity: layout.storeEntity) ?? entity
                return ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
            }
        }
    }

    /// Inserts (or upserts) `objects` in order and commits them, on the condition that no
    /// commit since `since` (each store's newest sequence before the request read it) changed
    /// the entity.
    ///
    /// - Throws: ``CoreDataError`` (see ``BatchInsertRequest``) for the first object that
    ///   fails, ``SaveConflict`` when a commit since changed the entity; nothing is written then.
    mutating func commit(_ objects: [[String: Any]], since: [String: UInt64]) throws {
        let writer = BatchWriter(coordinator: coordinator)
        guard constraints.isEmpty else {
            for object in objects { try add(object) }
            try writer.commit([store.identifier: try transaction()], since: since)
            return
        }
        insertedKeys = newKeys(objects.count)
        // The caller's dictionaries are only read, each by one thread.
        let shared = ParallelParts.ReadOnly(objects)
        let converter = self
        let inserted = InsertedRows(entity: layout.storeEntity, keys: insertedKeys, template: template) { index, row in
            try converter.fill(&row, with: shared.value[index])
        }
        try writer.commit(
            Transaction(author: author, contextName: contextName), inserting: inserted, into: store,
            since: since[store.identifier])
    }

    /// The transaction writing the rows of an entity with uniqueness constraints: upserts
    /// update only the columns they change.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store fails.
    private func transaction() throws -> Transaction {
        var transaction = Transaction(author: author, contextName: contextName)
        transaction.operations.reserveCapacity(rows.count)
        for (key, row, isNew) in rows {
            if isNew {
                transaction.insert(layout.storeEntity, key: key, row: row)
            } else if let stored = try coordinator.storeCall({ try store.rows.read(layout.storeEntity, key: key) }) {
                let changed = (1..<columnCount).filter { row[$0] != stored[$0] }
                if !changed.isEmpty {
                    transaction.update(layout.storeEntity, key: key, row: row, changedColumns: changed)
                }
            }
        }
        return transaction
    }

    /// Adds an object with `values`: defaults for the attributes left out.
    ///
    /// - Throws: ``CoreDataError`` (see ``BatchInsertRequest``).
    private mutating func add(_ values: [String: Any]) throws {
        var row = Row(Self.copy(template.values))
        try fill(&row, with: values)
        let key = newKeys(1).lowerBound
        guard let existing = try constraints.conflict(for: row, key: key) else {
            write(row, key: key, isNew: true)
            return
        }
        switch policy {
        case .errorMergePolicyType:
            throw CoreDataError(
                .managedObjectConstraintMerge,
                "an object of \(entity.entityName) with the same constrained values exists (key \(existing))")
        case .mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType:
            return
        case .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType:
            let earlier = positions[existing].map { (rows[$0].row, rows[$0].isNew) }
            let current =
                try earlier
                ?? coordinator.storeCall { try store.rows.read(layout.storeEntity, key: existing) }.map { ($0, false) }
            guard var merged = current?.0 else { return }
            let replaced = policy == .overwriteMergePolicyType ? columns : columns.filter { values[$0.name] != nil }
            for column in replaced { merged.values[column.column] = row.values[column.column] }
            write(merged, key: existing, isNew: current?.1 ?? false)
        }
    }

    /// Sets the columns of `row` (the template's defaults) to the attributes of an object with
    /// `values`.
    ///
    /// - Throws: ``CoreDataError`` (see ``BatchInsertRequest``).
    private func fill(_ row: inout Row, with values: [String: Any]) throws {
        do {
            // The dictionary is walked once, its names matched against the (few) attributes
            // without hashing them: most dictionaries list the attributes in one order.
            var guess = 0
            var givenWithoutDefault = 0
            for (name, value) in values {
                guard let index = position(of: name, from: guess) else {
                    // Not an attribute with a column: an error unless a stored attribute the store does not keep.
                    _ = try BatchValues.attribute(name, of: entity)
                    continue
                }
                row.values[columns[index].column] = try storeValue(value, column: index)
                if !columns[index].hasDefault { givenWithoutDefault += 1 }
                guess = index + 1
            }
            // An attribute whose default does not convert (a required one without default) must be given.
            if givenWithoutDefault < withoutDefault {
                for column in columns where !column.hasDefault && values[column.name] == nil {
                    row.values[column.column] = try BatchValues.storeValue(
                        column.attribute.defaultValue, for: column.attribute, entity: entity)
                }
            }
        } catch {
            // A name that is no stored attribute is the error to report first.
            try checkNames(values)
            throw error
        }
    }

    /// A copy of `values` in a buffer of its own, made value by value: changing a copy of the
    /// template's array would copy its buffer through the runtime's generic copy, about 500
    /// instructions a row (callgrind of strata-graph-bench B1).
    private static func copy(_ values: [Value]) -> [Value] {
        values.withUnsafeBufferPointer { source in
            [Value](unsafeUninitializedCapacity: source.count) { buffer, initialized in
                for index in source.indices { (buffer.baseAddress! + index).initialize(to: source[index]) }
                initialized = source.count
            }
        }
    }

    /// The position in ``columns`` of the attribute named `name`, looking from `guess` on first.
    private func position(of name: String, from guess: Int) -> Int? {
        for index in guess..<columns.count where columns[index].name == name { return index }
        for index in 0..<min(guess, columns.count) where columns[index].name == name { return index }
        return nil
    }

    /// Throws for the first name in `values` that is no stored attribute of the entity.
    private func checkNames(_ values: [String: Any]) throws {
        for name in values.keys { _ = try BatchValues.attribute(name, of: entity) }
    }

    /// The stored value of `value` for the attribute of ``columns`` at `index`: a value of
    /// exactly the attribute's Swift type converts in one step
    /// (``ValueConversion/exactStoreValue(_:type:)``); any other goes through
    /// ``BatchValues/storeValue(_:for:entity:)``.
    private func storeValue(_ value: Any, column index: Int) throws -> Value {
        if let stored = ValueConversion.exactStoreValue(value, type: columns[index].type) { return stored }
        return try BatchValues.storeValue(value, for: columns[index].attribute, entity: entity)
    }

    /// The next `count` keys of the block allocated for new rows (the block allocated again
    /// when too few are left).
    private mutating func newKeys(_ count: Int) -> Range<PrimaryKey> {
        if freeKeys.count < count {
            let keys = store.rows.allocateKeys(for: layout.storeEntity, count: count)
            freeKeys = keys.lowerBound..<(keys.upperBound + 1)
        }
        defer { freeKeys = (freeKeys.lowerBound + PrimaryKey(count))..<freeKeys.upperBound }
        return freeKeys.lowerBound..<(freeKeys.lowerBound + PrimaryKey(count))
    }

    /// Records `row` under `key`.
    private mutating func write(_ row: Row, key: PrimaryKey, isNew: Bool) {
        if let position = positions[key] {
            rows[position] = (key, row, isNew)
        } else {
            positions[key] = rows.count
            rows.append((key, row, isNew))
        }
        constraints.record(row, key: key)
    }
}
