import Foundation

extension Store {
    /// The schema of the store at `url`, read from its manifest without opening the store.
    ///
    /// - Parameter configuration: the file system to use (its `io`).
    /// - Throws: ``StoreError`` `unsupportedFormat` when the directory holds no store, `corrupt`
    ///   for a damaged manifest, `io` when it cannot be read.
    public static func storedSchema(
        at url: URL, configuration: StoreConfiguration = StoreConfiguration()
    ) throws -> Schema {
        let path = url.path + "/manifest"
        let io = configuration.io
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.unsupportedFormat, "the directory is not a Strata store (no manifest)", path: url.path)
        }
        let bytes = try StoreError.io("read manifest", path: path) { try io.readFile(path) }
        return try Manifest.decode(bytes, path: path).schema
    }

    /// Changes the schema of a store that no process has open, in place: one atomic replace of
    /// the manifest, nothing of the log rewritten, every primary key and the history kept.
    ///
    /// Only appending changes are made in place: `schema` keeps every entity at its id and every
    /// column at its position with its type (names, fetch indexes and tombstone flags may change,
    /// a column may become nullable), and adds entities and columns after them. Rows written
    /// before read a new column as `defaults[entity][column]`, else `null`; a new column that is
    /// not nullable needs a default. Fetch indexes of the new schema are built when the store is
    /// next opened (by replaying the log) when the indexed columns or the entities changed.
    /// A store goes through at most 255 such changes; later ones need a rewrite.
    ///
    /// - Parameters:
    ///   - url: the store directory.
    ///   - schema: the new schema.
    ///   - defaults: per entity id and column position, the value of a new column in older rows.
    ///   - configuration: the file system to use (its `io`).
    /// - Returns: whether the schema changed (`false` when the store already has `schema`).
    /// - Throws: ``StoreError`` `schemaMismatch` when `schema` is not an appending change of the
    ///   stored one (naming the entity and column), `locked` when a process has the store open,
    ///   `unsupportedFormat`, `corrupt`, `io`. The store is unchanged then.
    @discardableResult
    public static func evolveSchema(
        at url: URL, to schema: Schema, defaults: [Int: [Int: Value]] = [:],
        configuration: StoreConfiguration = StoreConfiguration()
    ) throws -> Bool {
        var unlocked = configuration
        unlocked.readOnly = false
        let recovery = Recovery(path: url.path, schema: nil, configuration: unlocked)
        let io = configuration.io
        let lockFD = try recovery.lock()
        defer {
            io.unlock(lockFD)
            io.close(lockFD)
        }
        let path = url.path + "/manifest"
        let bytes = try StoreError.io("read manifest", path: path) { try io.readFile(path) }
        var manifest = try Manifest.decode(bytes, path: path)
        let old = manifest.schema
        guard old != schema else { return false }
        try checkEvolution(from: old, to: schema, defaults: defaults)
        guard manifest.schemaHistory.version < SchemaHistory.maximumVersion else {
            throw StoreError(
                .schemaMismatch,
                "the store's schema changed \(SchemaHistory.maximumVersion) times in place; it must be rewritten",
                path: path)
        }
        let keepsCheckpoint =
            old.entities.count == schema.entities.count
            && old.entities.indices.allSatisfy { old.entities[$0].indexedColumns == schema.entities[$0].indexedColumns }
        manifest.schemaHistory = manifest.schemaHistory.advanced(from: old, defaults: defaults)
        manifest.schema = schema
        manifest.nextKeys += Array(repeating: 1, count: schema.entities.count - old.entities.count)
        if !keepsCheckpoint { manifest.checkpoint = nil }
        try StoreError.io("write manifest", path: path) {
            try io.replaceAtomically(path, with: manifest.encode(), directory: url.path)
        }
        configuration.logger.debug(
            "evolved store schema in place",
            metadata: [
                "path": "\(url.path)", "version": "\(manifest.schemaHistory.version)",
                "entities": "\(schema.entities.count)",
            ])
        return true
    }

    /// Checks that `new` only appends to `old` (see ``evolveSchema(at:to:defaults:configuration:)``).
    ///
    /// - Throws: ``StoreError`` `schemaMismatch` naming the first entity and column that differ.
    static func checkEvolution(from old: Schema, to new: Schema, defaults: [Int: [Int: Value]]) throws {
        guard new.entities.count >= old.entities.count else {
            throw StoreError(
                .schemaMismatch,
                "an in-place schema change cannot remove entities (\(old.entities.count) before, \(new.entities.count) after)"
            )
        }
        for (before, after) in zip(old.entities, new.entities) {
            guard after.columns.count >= before.columns.count else {
                throw StoreError(.schemaMismatch, "an in-place schema change cannot remove columns of \(before.name)")
            }
            for (column, (was, now)) in zip(before.columns, after.columns).enumerated() {
                guard was.type == now.type else {
                    throw StoreError(
                        .schemaMismatch,
                        "\(before.name) column \(column) (\(was.name)) changes type from \(was.type.name) to \(now.type.name)"
                    )
                }
                guard now.isNullable || !was.isNullable else {
                    throw StoreError(
                        .schemaMismatch,
                        "\(before.name) column \(column) (\(was.name)) cannot become non-nullable in place")
                }
            }
            for column in before.columns.count..<after.columns.count {
                let value = defaults[after.id]?[column] ?? .null
                guard after.columns[column].type.accepts(value), !value.isNull || after.columns[column].isNullable
                else {
                    throw StoreError(
                        .schemaMismatch,
                        "\(after.name) column \(after.columns[column].name) is new and needs a default of its type")
                }
            }
        }
    }
}
