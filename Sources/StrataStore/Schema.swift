/// The entities a store holds and the columns of each.
///
/// A schema is stored in the store's manifest; opening a store with a schema whose
/// ``hash`` differs is a ``StoreError/Code/schemaMismatch`` error. `Schema` is `Sendable`.
public struct Schema: Sendable, Hashable {
    /// The entities, where `entities[i].id == i`.
    public private(set) var entities: [EntitySchema]

    /// Creates a schema.
    ///
    /// - Parameter entities: the entities; their ids must be `0..<entities.count` in order.
    /// - Throws: ``StoreError/Code/invalidSchema`` when ids are out of order, names repeat, a
    ///   reference names an unknown entity, or an entity has more than 4,096 columns.
    public init(entities: [EntitySchema]) throws {
        var names = Set<String>()
        for (position, entity) in entities.enumerated() {
            guard entity.id == position else {
                throw StoreError(.invalidSchema, "entity \(entity.name) has id \(entity.id), expected \(position)")
            }
            guard names.insert(entity.name).inserted else {
                throw StoreError(.invalidSchema, "entity name \(entity.name) is used twice")
            }
            guard entity.columns.count <= 4096 else {
                throw StoreError(.invalidSchema, "entity \(entity.name) has more than 4096 columns")
            }
            for column in entity.columns {
                if case .reference(let target) = column.type, !(0..<entities.count).contains(target) {
                    throw StoreError(
                        .invalidSchema, "\(entity.name).\(column.name) references unknown entity \(target)")
                }
            }
        }
        self.entities = entities
    }

    /// The entity named `name`, if any.
    public func entity(named name: String) -> EntitySchema? {
        entities.first { $0.name == name }
    }

    /// A stable 64-bit hash of everything that shapes rows and indexes on disk.
    ///
    /// Two schemas with equal hashes read each other's stores.
    public var hash: UInt64 {
        var writer = BinaryWriter()
        encode(into: &writer)
        return FNV1a.hash(writer.bytes)
    }
}

/// One entity: a kind of row with a fixed list of columns. `Sendable`.
public struct EntitySchema: Sendable, Hashable {
    /// The entity's id, its position in ``Schema/entities``.
    public var id: Int
    /// The entity's name.
    public var name: String
    /// The columns, in row order.
    public var columns: [ColumnSchema] {
        didSet { (indexedColumns, tombstoneColumns) = Self.derivedColumns(columns) }
    }
    /// The positions of the columns that have a fetch index (declared, or a reference).
    // Stored, kept in step with `columns`: a commit reads it for every operation.
    public private(set) var indexedColumns: [Int]
    /// The positions of the columns whose values are kept in the tombstone of a deleted row.
    public private(set) var tombstoneColumns: [Int]

    /// Creates an entity.
    public init(id: Int, name: String, columns: [ColumnSchema]) {
        self.id = id
        self.name = name
        self.columns = columns
        (indexedColumns, tombstoneColumns) = Self.derivedColumns(columns)
    }

    /// The tombstone of a deleted `row`: its ``tombstoneColumns`` kept, every other of the
    /// `width` columns `null`.
    func tombstone(of row: Row, width: Int) -> Row {
        var tombstone = Row(Array(repeating: .null, count: width))
        for column in tombstoneColumns { tombstone[column] = row[column] }
        return tombstone
    }

    /// ``indexedColumns`` and ``tombstoneColumns`` of `columns`.
    private static func derivedColumns(_ columns: [ColumnSchema]) -> (indexed: [Int], tombstone: [Int]) {
        (columns.indices.filter { columns[$0].hasFetchIndex }, columns.indices.filter { columns[$0].keepsTombstone })
    }

    /// Whether two entities have the same id, name and columns.
    public static func == (lhs: EntitySchema, rhs: EntitySchema) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.columns == rhs.columns
    }

    /// Hashes the id, name and columns.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(columns)
    }

    /// The position of the column named `name`, if any.
    public func columnIndex(named name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }
}

/// One column of an entity. `Sendable`.
public struct ColumnSchema: Sendable, Hashable {
    /// The column's name.
    public var name: String
    /// The type of its values.
    public var type: ColumnType
    /// Whether the column may hold ``Value/null``. The default is `true`.
    public var isNullable: Bool
    /// Whether a fetch index is kept on the column. Reference columns always have one.
    /// The default is `false`.
    public var isIndexed: Bool
    /// Whether the value is kept in the tombstone of a deleted row. The default is `false`.
    public var keepsTombstone: Bool

    /// Creates a column.
    public init(
        name: String,
        type: ColumnType,
        isNullable: Bool = true,
        isIndexed: Bool = false,
        keepsTombstone: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isNullable = isNullable
        self.isIndexed = isIndexed
        self.keepsTombstone = keepsTombstone
    }

    /// Whether the store keeps a fetch index on this column.
    public var hasFetchIndex: Bool {
        if case .reference = type { return true }
        return isIndexed
    }
}

/// The type of a column's values. `Sendable`.
public enum ColumnType: Sendable, Hashable {
    /// 16-bit signed integer, held as ``Value/int(_:)``.
    case int16
    /// 32-bit signed integer, held as ``Value/int(_:)``.
    case int32
    /// 64-bit signed integer, held as ``Value/int(_:)``.
    case int64
    /// Single-precision float.
    case float
    /// Double-precision float.
    case double
    /// Decimal number.
    case decimal
    /// Boolean.
    case bool
    /// String.
    case string
    /// Date.
    case date
    /// Binary data.
    case binary
    /// UUID.
    case uuid
    /// URI.
    case uri
    /// A transformable value, stored as the data its transformer produced.
    case transformable
    /// A to-one reference to a row of the entity with id `entity`.
    case reference(entity: Int)

    /// Whether `value` may be stored in a column of this type (ignoring nullability).
    public func accepts(_ value: Value) -> Bool {
        switch (self, value) {
        case (_, .null): return true
        case (.int16, .int(let v)): return Int16(exactly: v) != nil
        case (.int32, .int(let v)): return Int32(exactly: v) != nil
        case (.int64, .int): return true
        case (.float, .float), (.double, .double), (.decimal, .decimal), (.bool, .bool): return true
        case (.string, .string), (.date, .date), (.uuid, .uuid), (.uri, .uri): return true
        case (.binary, .data), (.transformable, .data): return true
        case (.reference, .reference(let key)): return key > 0
        default: return false
        }
    }
}
