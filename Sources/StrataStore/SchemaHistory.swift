/// What in-place schema evolution keeps so that rows written under earlier versions of a store's
/// schema are read under the current one.
///
/// Evolution only appends: entities keep their ids and columns their positions, new ones come
/// after them. A row written under version `v` holds the first ``columnCounts``[v][entity]
/// columns of its entity; the columns after them read as their ``defaults`` value (`null`
/// unless a default was given when the column was added). Every block records the version its
/// rows were written under (the block header's former reserved byte).
struct SchemaHistory: Sendable, Hashable {
    /// The most versions a store can go through (a block records its version in one byte).
    static let maximumVersion = 255

    /// The version rows are written under now; 0 until the schema first evolves.
    var version = 0
    /// For each earlier version, the number of columns of each entity (entities added later are
    /// missing: they had no rows).
    var columnCounts: [[Int]] = []
    /// Per entity and column, the value rows written before the column existed read, when not `null`.
    var defaults: [Int: [Int: Value]] = [:]

    /// The codecs of every version, indexed by version then entity: rows of earlier versions
    /// decode their stored columns and take the rest from ``defaults``.
    func codecs(for schema: Schema) -> [[RowCodec]] {
        (0...version).map { version in
            schema.entities.map { entity in
                guard version < self.version else { return RowCodec(entity) }
                let stored = columnCounts[version].indices.contains(entity.id) ? columnCounts[version][entity.id] : 0
                let padding = (stored..<entity.columns.count).map { defaults[entity.id]?[$0] ?? .null }
                return RowCodec(entity, storedColumns: stored, padding: padding)
            }
        }
    }

    /// The history once the current schema, `schema`, evolves: its column counts are kept as
    /// the current version's, the `added` defaults are recorded and the version advances.
    func advanced(from schema: Schema, defaults added: [Int: [Int: Value]]) -> SchemaHistory {
        var next = self
        next.columnCounts.append(schema.entities.map(\.columns.count))
        next.version += 1
        for (entity, columns) in added {
            for (column, value) in columns where !value.isNull { next.defaults[entity, default: [:]][column] = value }
        }
        return next
    }

    /// Writes the history in the manifest's binary form (`schema` is the current one).
    func encode(into writer: inout BinaryWriter, schema: Schema) {
        writer.varint(version)
        for counts in columnCounts {
            writer.varint(counts.count)
            for count in counts { writer.varint(count) }
        }
        let entries = defaults.flatMap { entity, columns in columns.map { (entity, $0.key, $0.value) } }.sorted {
            ($0.0, $0.1) < ($1.0, $1.1)
        }
        writer.varint(entries.count)
        for (entity, column, value) in entries {
            writer.varint(entity)
            writer.varint(column)
            Checkpoint.valueCodec(schema.entities[entity].columns[column]).encode(Row([value]), into: &writer)
        }
    }

    /// Reads a history written by ``encode(into:schema:)``.
    static func decode(from reader: inout BinaryReader, schema: Schema) throws -> SchemaHistory {
        var history = SchemaHistory()
        history.version = try reader.count(limit: maximumVersion)
        for _ in 0..<history.version {
            var counts: [Int] = []
            for entity in 0..<(try reader.count(limit: 65_535)) {
                let start = reader.position
                let count = try reader.count(limit: 4096)
                // Evolution only appends columns: an older version has no more than the current one.
                guard !schema.entities.indices.contains(entity) || count <= schema.entities[entity].columns.count else {
                    throw BinaryReader.Malformed(offset: start)
                }
                counts.append(count)
            }
            history.columnCounts.append(counts)
        }
        for _ in 0..<(try reader.count(limit: 1 << 20)) {
            let entity = try reader.count(limit: 65_535)
            let column = try reader.count(limit: 4096)
            guard schema.entities.indices.contains(entity), schema.entities[entity].columns.indices.contains(column)
            else {
                throw BinaryReader.Malformed(offset: reader.position)
            }
            let codec = Checkpoint.valueCodec(schema.entities[entity].columns[column])
            history.defaults[entity, default: [:]][column] = try codec.decodeSingleValue(from: &reader)
        }
        return history
    }
}
