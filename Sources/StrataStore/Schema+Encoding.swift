extension Schema {
    /// Writes the schema in the manifest's binary form.
    func encode(into writer: inout BinaryWriter) {
        writer.varint(entities.count)
        for entity in entities {
            writer.varint(entity.id)
            writer.string(entity.name)
            writer.varint(entity.columns.count)
            for column in entity.columns {
                writer.string(column.name)
                writer.u8(column.type.tag)
                if case .reference(let target) = column.type { writer.varint(target) }
                writer.u8((column.isNullable ? 1 : 0) | (column.isIndexed ? 2 : 0) | (column.keepsTombstone ? 4 : 0))
            }
        }
    }

    /// Reads a schema written by ``encode(into:)``.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a valid schema (at the
    ///   offset of the schema's start when the entities do not make a valid ``Schema``).
    static func decode(from reader: inout BinaryReader) throws -> Schema {
        let start = reader.position
        let entityCount = try reader.count(limit: 65_535)
        var entities: [EntitySchema] = []
        for _ in 0..<entityCount {
            let id = try reader.count(limit: 65_535)
            let name = try reader.string()
            let columnCount = try reader.count(limit: 4096)
            var columns: [ColumnSchema] = []
            for _ in 0..<columnCount {
                let columnName = try reader.string()
                let tag = try reader.u8()
                let type: ColumnType
                if tag == ColumnType.referenceTag {
                    type = .reference(entity: try reader.count(limit: 65_535))
                } else if let known = ColumnType(tag: tag) {
                    type = known
                } else {
                    throw BinaryReader.Malformed(offset: reader.position - 1)
                }
                let flags = try reader.u8()
                columns.append(
                    ColumnSchema(
                        name: columnName, type: type,
                        isNullable: flags & 1 != 0, isIndexed: flags & 2 != 0, keepsTombstone: flags & 4 != 0))
            }
            entities.append(EntitySchema(id: id, name: name, columns: columns))
        }
        do {
            return try Schema(entities: entities)
        } catch {
            throw BinaryReader.Malformed(offset: start)
        }
    }
}

extension ColumnType {
    /// The tag of a reference column.
    static let referenceTag: UInt8 = 14

    private static let simple: [ColumnType] = [
        .int16, .int32, .int64, .float, .double, .decimal, .bool, .string, .date, .binary, .uuid, .uri,
        .transformable,
    ]

    /// The type's one-byte tag on disk.
    var tag: UInt8 {
        if case .reference = self { return Self.referenceTag }
        return UInt8(Self.simple.firstIndex(of: self)! + 1)
    }

    /// The simple (non-reference) type with the given tag.
    init?(tag: UInt8) {
        guard tag >= 1, Int(tag) <= Self.simple.count else { return nil }
        self = Self.simple[Int(tag) - 1]
    }

    /// The type's name as the CLI and docs print it.
    public var name: String {
        switch self {
        case .int16: return "int16"
        case .int32: return "int32"
        case .int64: return "int64"
        case .float: return "float"
        case .double: return "double"
        case .decimal: return "decimal"
        case .bool: return "bool"
        case .string: return "string"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .transformable: return "transformable"
        case .reference(let entity): return "reference(\(entity))"
        }
    }
}
