internal import StrataStore

/// How a save makes the stored rows of its objects (entity tag, attributes and to-one
/// references), decided once a save for each entity from its runtime and layout and kept in
/// plain values.
///
/// A save of many objects makes their rows on several threads at once (``StoreWriter``).
/// Reading the entity's runtime, layout or attribute descriptions for each row retained and
/// released them: atomic operations on memory that every thread writes, whose cache lines
/// then bounced between the cores (a third of the time spent making rows, `perf` of
/// strata-graph-bench W1). The rows are made from these values instead, which count no
/// reference; an attribute's description is read only for a value that is not exactly of the
/// Swift type the attribute holds.
struct RowFills: Sendable {
    /// How the rows of one entity's objects are made.
    struct Entity: Sendable {
        /// The runtime of the entity's objects (``ManagedObject/runtime``).
        let runtime: ObjectIdentifier
        /// The engine entity the rows are stored in.
        let storeEntity: Int
        /// The entity's tag, in column 0.
        let tag: Int64
        /// The number of columns of a row of ``storeEntity``.
        let columnCount: Int
        /// The entity's columns in ``RowFills/columns``.
        let columns: Range<Int>
        /// Whether the entity's objects write join rows (of many-to-many or ordered relationships).
        let writesJoinRows: Bool
    }

    /// One column an object's slot fills.
    struct Column: Sendable {
        /// The slot.
        let slot: Int
        /// The column.
        let column: Int
        /// The attribute's type, or `nil` for a to-one relationship's reference.
        let attributeType: AttributeType?
    }

    /// The entities added so far.
    private(set) var entities: [Entity] = []
    /// The columns of every entity, one entity's after another's.
    private var columns: [Column] = []
    /// The mapping whose layouts the rows follow.
    private let mapping: StoreMapping
    /// The number of columns of each engine entity.
    private let columnCounts: [Int]

    /// No entity yet: ``index(of:)`` adds each on first use.
    init(mapping: StoreMapping, columnCounts: [Int]) {
        self.mapping = mapping
        self.columnCounts = columnCounts
    }

    /// The entities of `objects` added, on this thread, so that threads sharing out the objects
    /// only look them up (``existingIndex(of:)``); others are added by ``row(of:)``.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the model has no entity of an object's entity's name.
    init(for objects: [ManagedObject], mapping: StoreMapping, columnCounts: [Int]) throws {
        self.init(mapping: mapping, columnCounts: columnCounts)
        var previous: ObjectIdentifier?
        for object in objects where ObjectIdentifier(object.runtime) != previous {
            previous = ObjectIdentifier(object.runtime)
            _ = try index(of: object)
        }
    }

    /// The index in ``entities`` of `object`'s entity, added when it is not yet.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the model has no entity of its name.
    mutating func index(of object: ManagedObject) throws -> Int {
        if let index = existingIndex(of: object) { return index }
        let runtime = object.runtime
        let layout = try mapping.requiredLayout(of: runtime.entity)
        let start = columns.count
        for (slot, column) in layout.slotColumns.enumerated() where column >= 0 {
            switch runtime.loads[slot] {
            case .plain, .integer16, .integer32, .converted:
                let attribute = unsafeDowncast(runtime.properties[slot], to: AttributeDescription.self)
                columns.append(Column(slot: slot, column: column, attributeType: attribute.attributeType))
            case .toOne, .toOneOfHierarchy:
                columns.append(Column(slot: slot, column: column, attributeType: nil))
            case .none:
                guard case .toOne = runtime.kinds[slot] else { continue }
                columns.append(Column(slot: slot, column: column, attributeType: nil))
            }
        }
        entities.append(
            Entity(
                runtime: ObjectIdentifier(runtime), storeEntity: layout.storeEntity, tag: layout.tag,
                columnCount: columnCounts[layout.storeEntity], columns: start..<columns.count,
                writesJoinRows: layout.joins.values.contains(where: \.writesPairs)))
        return entities.count - 1
    }

    /// The index in ``entities`` of `object`'s entity, if it was added.
    func existingIndex(of object: ManagedObject) -> Int? {
        let runtime = ObjectIdentifier(object.runtime)
        return entities.firstIndex { $0.runtime == runtime }
    }

    /// The row of `object`, its entity added when it is not yet.
    ///
    /// - Throws: what ``index(of:)`` and ``fill(_:of:entity:)`` throw.
    mutating func row(of object: ManagedObject) throws -> Row {
        let entity = try index(of: object)
        var row = Row([])
        try fill(&row, of: object, entity: entity)
        return row
    }

    /// Sets `row` to the row of `object`, whose entity is ``entities`` `[entity]`, reusing the
    /// row's buffer when it has the entity's number of columns.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectExternalRelationship` when a related object is
    ///   not saved in `object`'s store; what converting a value to its column throws.
    func fill(_ row: inout Row, of object: ManagedObject, entity: Int) throws {
        let entity = entities[entity]
        let columnCount = entity.columnCount
        if row.count == columnCount {
            for column in 0..<columnCount { row.values[column] = .null }
        } else {
            // Reserved, then appended: `Array(repeating:count:)` and
            // `Array(unsafeUninitializedCapacity:)` allocate through the standard library's
            // unspecialized entry point, which looks the buffer's type up at run time
            // (~600 instructions a row, callgrind of W2).
            var values: [Value] = []
            values.reserveCapacity(columnCount)
            for _ in 0..<columnCount { values.append(.null) }
            row = Row(values)
        }
        let objectValues = object.values
        // Each column is assigned through the buffer, without a uniqueness check.
        try row.values.withUnsafeMutableBufferPointer { values in
            values[0] = .int(entity.tag)
            for index in entity.columns {
                let column = columns[index]
                // A nil value leaves the column's `.null`.
                guard let value = objectValues[column.slot] else { continue }
                guard let type = column.attributeType else {
                    values[column.column] = try Self.reference(value, slot: column.slot, of: object)
                    continue
                }
                if let stored = ValueConversion.exactStoreValue(value, type: type) {
                    values[column.column] = stored
                } else {
                    let attribute = unsafeDowncast(
                        object.runtime.properties[column.slot], to: AttributeDescription.self)
                    values[column.column] = try ValueConversion.storeValue(value, for: attribute)
                }
            }
        }
    }

    /// The stored reference of a to-one relationship slot's value (`.null` for no object).
    ///
    /// - Throws: ``CoreDataError`` `managedObjectExternalRelationship` when the related object is
    ///   not saved in `object`'s store.
    private static func reference(_ value: Any, slot: Int, of object: ManagedObject) throws -> Value {
        guard let id = SlotValueCast.cast(value, to: ManagedObjectID.self) else { return .null }
        guard !id.isTemporaryID, id.storeIdentifier == object.objectID.storeIdentifier else {
            let name = object.runtime.names[slot]
            throw CoreDataError(
                .managedObjectExternalRelationship,
                "\(object.entity.entityName).\(name) points at an object that is not saved in the same store",
                objectID: object.objectID, key: name)
        }
        return .reference(id.primaryKey)
    }
}
