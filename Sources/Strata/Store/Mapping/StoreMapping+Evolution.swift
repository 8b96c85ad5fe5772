internal import StrataStore

extension StoreMapping {
    /// The prefix of the name of a column or entity no longer in the model, kept so that rows
    /// written before keep their layout (its position is never reused).
    static let retiredPrefix = "~"

    /// This mapping laid over a store whose engine schema is `stored`, as an in-place migration
    /// leaves it: every engine entity and column of `stored` keeps its id and position (matched by
    /// name and type), the model's new ones come after them, and the ones the model no longer has
    /// stay in place as retired (renamed with ``retiredPrefix``, not indexed, nullable), so that
    /// rows written before are read unchanged.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the schema it makes is not valid.
    func evolved(onto stored: Schema) throws -> StoreMapping {
        // The id in the evolved schema of each entity of this mapping's schema (whose ids are
        // their positions).
        var added = stored.entities.count
        let entityIDs = schema.entities.map { entity in
            if let existing = stored.entity(named: entity.name) { return existing.id }
            added += 1
            return added - 1
        }
        func translated(_ column: ColumnSchema) -> ColumnSchema {
            var column = column
            if case .reference(let target) = column.type { column.type = .reference(entity: entityIDs[target]) }
            return column
        }
        var entities = stored.entities
        var columnMaps = [[Int]](repeating: [], count: added)
        let matched = Set(entityIDs)
        for index in entities.indices where !matched.contains(index) {
            entities[index] = Self.retired(entities[index])
        }
        for entity in schema.entities {
            let id = entityIDs[entity.id]
            guard id < stored.entities.count else {
                entities.append(EntitySchema(id: id, name: entity.name, columns: entity.columns.map(translated)))
                columnMaps[id] = Array(entity.columns.indices)
                continue
            }
            var columns = stored.entities[id].columns
            var used = Set<Int>()
            for column in entity.columns.map(translated) {
                if let position = columns.indices.first(where: {
                    !used.contains($0) && columns[$0].name == column.name && columns[$0].type == column.type
                }) {
                    columns[position].isIndexed = column.isIndexed
                    columns[position].keepsTombstone = column.keepsTombstone
                    columns[position].isNullable = columns[position].isNullable || column.isNullable
                    used.insert(position)
                    columnMaps[id].append(position)
                } else {
                    columnMaps[id].append(columns.count)
                    used.insert(columns.count)
                    columns.append(column)
                }
            }
            for position in columns.indices where !used.contains(position) {
                columns[position] = Self.retired(columns[position], at: position)
            }
            entities[id] = EntitySchema(id: id, name: entity.name, columns: columns)
        }
        let evolvedSchema: Schema
        do {
            evolvedSchema = try Schema(entities: entities.sorted { $0.id < $1.id })
        } catch {
            throw CoreDataError(.coreData, "the model cannot be laid over the store's schema: \(error)")
        }
        var evolvedLayouts: [String: EntityLayout] = [:]
        for (name, layout) in layouts {
            let map = columnMaps[entityIDs[layout.storeEntity]]
            evolvedLayouts[name] = EntityLayout(
                storeEntity: entityIDs[layout.storeEntity], tag: layout.tag, tags: layout.tags,
                columns: layout.columns.mapValues { map[$0] },
                slotColumns: layout.slotColumns.map { $0 < 0 ? $0 : map[$0] },
                sharedColumns: Set(layout.sharedColumns.map { map[$0] }),
                joins: layout.joins.mapValues { join in
                    JoinLayout(
                        storeEntity: entityIDs[join.storeEntity], isSource: join.isSource, isOrdered: join.isOrdered,
                        writesPairs: join.writesPairs)
                })
        }
        let byTag = Dictionary(uniqueKeysWithValues: entitiesByTag.map { (entityIDs[$0.key], $0.value) })
        return StoreMapping(schema: evolvedSchema, layouts: evolvedLayouts, entitiesByTag: byTag)
    }

    /// An entity the model no longer has, kept with its columns (not indexed) under a retired name.
    private static func retired(_ entity: EntitySchema) -> EntitySchema {
        let name =
            entity.name.hasPrefix(retiredPrefix)
            ? entity.name : "\(retiredPrefix)\(entity.name)\(retiredPrefix)\(entity.id)"
        return EntitySchema(
            id: entity.id, name: name, columns: entity.columns.enumerated().map { retired($0.element, at: $0.offset) })
    }

    /// A column the model no longer has: nullable, not indexed, under a retired name.
    private static func retired(_ column: ColumnSchema, at position: Int) -> ColumnSchema {
        var column = column
        if !column.name.hasPrefix(retiredPrefix) {
            column.name = "\(retiredPrefix)\(column.name)\(retiredPrefix)\(position)"
        }
        column.isNullable = true
        column.isIndexed = false
        column.keepsTombstone = false
        return column
    }
}
