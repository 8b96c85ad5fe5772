import Foundation
import Logging
import NIOCore
import PostgresNIO
import StrataStore

/// Appends transactions to the shared log in one statement (in a transaction holding the head
/// lock): the log rows, the row images they leave in `strata_object`, the key floors and the
/// head, whatever the number of transactions and operations. A save (synchronous mode) appends
/// one transaction with its version checks; an export (asynchronous mode) appends a batch.
struct MirrorLogAppend {
    /// One log row to append.
    struct Entry {
        var position: Int64
        var originSequence: Int64
        var author: String?
        var contextName: String?
        var timestamp: Date
        var payload: Data
        /// The operations, for the row images.
        var operations: [StrataStore.Operation]
    }

    /// The instance the entries come from.
    var origin: String
    /// The entries, in log order, at consecutive positions after the head.
    var entries: [Entry] = []

    /// The head after the entries.
    var head: Int64? { entries.last?.position }

    /// The sequences of `sequences` the log already holds from `origin` (an export the
    /// instance committed in PostgreSQL but not locally before a crash or a bootstrap).
    static func alreadyLogged(
        origin: String, sequences: [Int64], on connection: PostgresConnection, logger: Logger
    ) async throws -> Set<Int64> {
        guard !sequences.isEmpty else { return [] }
        var logged: Set<Int64> = []
        for try await sequence in try await connection.send(
            "SELECT origin_seq FROM strata_txn WHERE origin = \(origin) AND origin_seq = ANY(\(sequences))",
            logger: logger
        ).decode(Int64.self) {
            logged.insert(sequence)
        }
        return logged
    }

    /// Appends the entries as an export does: each object's image is netted over the entries
    /// (an insert writes the row, an update only its columns onto the image before it, a
    /// delete removes it; an update of an object PostgreSQL no longer holds changes nothing,
    /// as every instance applies it). Reads the images the updates start from in one statement.
    func export(on connection: PostgresConnection, logger: Logger) async throws {
        guard let head else { return }
        var seen: Set<ObjectKey> = [], needed: [ObjectKey] = []
        for entry in entries {
            for operation in entry.operations
            where seen.insert(ObjectKey(entity: operation.entity, key: operation.key)).inserted {
                if case .update = operation { needed.append(ObjectKey(entity: operation.entity, key: operation.key)) }
            }
        }
        var images = try await Self.storedImages(of: needed, on: connection, logger: logger)
        var deleted: Set<ObjectKey> = []
        for entry in entries {
            for operation in entry.operations {
                let object = ObjectKey(entity: operation.entity, key: operation.key)
                switch operation {
                case .insert(_, _, let row):
                    images[object] = (entry.position, row.values.map(TaggedValue.init))
                    deleted.remove(object)
                case .update(_, _, let row, let columns):
                    guard var image = images[object] else { continue }
                    for column in columns where column < image.row.count && column < row.count {
                        image.row[column] = TaggedValue(row[column])
                    }
                    image.position = entry.position
                    images[object] = image
                case .delete:
                    images[object] = nil
                    deleted.insert(object)
                }
            }
        }
        var put = ObjectColumns(), gone = ObjectColumns()
        for (object, image) in images { try put.append(object, position: image.position, row: image.row) }
        for object in deleted { gone.append(object) }
        let log = LogColumns(entries)
        try await connection.send(
            """
            WITH gone AS (
                DELETE FROM strata_object o USING unnest(\(gone.entities)::int4[], \(gone.keys)::int8[]) AS x(e, k)
                WHERE o.entity = x.e AND o.pk = x.k),
            put AS (
                INSERT INTO strata_object (entity, pk, pos, row)
                SELECT * FROM unnest(\(put.entities)::int4[], \(put.keys)::int8[], \(put.positions)::int8[], \(put.rows)::bytea[])
                ON CONFLICT (entity, pk) DO UPDATE SET pos = EXCLUDED.pos, row = EXCLUDED.row),
            txn AS (
                INSERT INTO strata_txn (pos, origin, origin_seq, author, context, ts, payload)
                SELECT p, \(origin), s, CASE WHEN an THEN NULL ELSE a END, CASE WHEN cn THEN NULL ELSE c END, t, b
                FROM unnest(\(log.positions)::int8[], \(log.sequences)::int8[], \(log.authors)::text[], \(log.noAuthor)::bool[],
                    \(log.contexts)::text[], \(log.noContext)::bool[], \(log.timestamps)::timestamptz[], \(log.payloads)::bytea[])
                    AS x(p, s, a, an, c, cn, t, b)),
            head AS (UPDATE strata_head SET pos = \(head) WHERE id = 1)
            SELECT 1
            """, logger: logger)
    }

    /// Appends the one entry of a save, checking that no object it touches changed in
    /// PostgreSQL after `base` (an insert finds no object, an update or a delete finds one
    /// written at or before `base`), and raises the key floors past the keys it inserts.
    ///
    /// - Throws: ``MirrorError/versionConflict(entity:key:)`` for an object that changed, after
    ///   which the caller rolls back; ``MirrorError/malformedPayload(_:)`` when the log already
    ///   holds the entry's origin and sequence.
    func save(base: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        guard let entry = entries.first, entries.count == 1 else { return }
        var inserted = ObjectColumns(), updated = ObjectColumns(), deleted = ObjectColumns()
        var floors: [Int: Int64] = [:]
        for operation in entry.operations {
            let object = ObjectKey(entity: operation.entity, key: operation.key)
            switch operation {
            case .insert(let entity, let key, let row):
                try inserted.append(object, position: entry.position, row: row.values.map(TaggedValue.init))
                floors[entity] = max(floors[entity] ?? 0, key + 1)
            case .update(_, _, let row, _):
                try updated.append(object, position: entry.position, row: row.values.map(TaggedValue.init))
            case .delete: deleted.append(object)
            }
        }
        let log = LogColumns(entries)
        let (floorEntities, floorKeys) = (floors.keys.map { Int32($0) }, floors.values.map { $0 })
        let rows = try await connection.send(
            """
            WITH ins AS (
                INSERT INTO strata_object (entity, pk, pos, row)
                SELECT * FROM unnest(\(inserted.entities)::int4[], \(inserted.keys)::int8[], \(inserted.positions)::int8[], \(inserted.rows)::bytea[])
                ON CONFLICT DO NOTHING RETURNING entity, pk),
            upd AS (
                UPDATE strata_object o SET pos = \(entry.position), row = x.r
                FROM unnest(\(updated.entities)::int4[], \(updated.keys)::int8[], \(updated.rows)::bytea[]) AS x(e, k, r)
                WHERE o.entity = x.e AND o.pk = x.k AND o.pos <= \(base) RETURNING o.entity, o.pk),
            del AS (
                DELETE FROM strata_object o USING unnest(\(deleted.entities)::int4[], \(deleted.keys)::int8[]) AS x(e, k)
                WHERE o.entity = x.e AND o.pk = x.k AND o.pos <= \(base) RETURNING o.entity, o.pk),
            floors AS (
                INSERT INTO strata_keys (entity, next) SELECT * FROM unnest(\(floorEntities)::int4[], \(floorKeys)::int8[])
                ON CONFLICT (entity) DO UPDATE SET next = greatest(strata_keys.next, EXCLUDED.next)),
            txn AS (
                INSERT INTO strata_txn (pos, origin, origin_seq, author, context, ts, payload)
                SELECT p, \(origin), s, CASE WHEN an THEN NULL ELSE a END, CASE WHEN cn THEN NULL ELSE c END, t, b
                FROM unnest(\(log.positions)::int8[], \(log.sequences)::int8[], \(log.authors)::text[], \(log.noAuthor)::bool[],
                    \(log.contexts)::text[], \(log.noContext)::bool[], \(log.timestamps)::timestamptz[], \(log.payloads)::bytea[])
                    AS x(p, s, a, an, c, cn, t, b)
                ON CONFLICT (origin, origin_seq) DO NOTHING RETURNING pos),
            head AS (UPDATE strata_head SET pos = \(entry.position) WHERE id = 1)
            SELECT entity, pk FROM ins UNION ALL SELECT entity, pk FROM upd UNION ALL SELECT entity, pk FROM del
            UNION ALL SELECT -1, pos FROM txn
            """, logger: logger)
        var matched: Set<ObjectKey> = []
        var logged = false
        for try await (entity, key) in rows.decode((Int32, Int64).self) {
            if entity == -1 { logged = true } else { matched.insert(ObjectKey(entity: Int(entity), key: key)) }
        }
        if let missed = entry.operations.first(where: { !matched.contains(ObjectKey(entity: $0.entity, key: $0.key)) })
        {
            throw MirrorError.versionConflict(entity: missed.entity, key: missed.key)
        }
        guard logged else {
            throw MirrorError.malformedPayload("the log already holds \(origin) transaction \(entry.originSequence)")
        }
    }

    /// The images `strata_object` holds of `objects`, read in one statement.
    private static func storedImages(
        of objects: [ObjectKey], on connection: PostgresConnection, logger: Logger
    ) async throws -> [ObjectKey: (position: Int64, row: [TaggedValue])] {
        var images: [ObjectKey: (position: Int64, row: [TaggedValue])] = [:]
        guard !objects.isEmpty else { return images }
        let (entities, keys) = (objects.map { Int32($0.entity) }, objects.map(\.key))
        let rows = try await connection.send(
            """
            SELECT o.entity, o.pk, o.pos, o.row FROM strata_object o
            JOIN unnest(\(entities)::int4[], \(keys)::int8[]) AS x(e, k) ON o.entity = x.e AND o.pk = x.k
            """, logger: logger)
        for try await (entity, key, position, data) in rows.decode((Int32, Int64, Int64, Data).self) {
            images[ObjectKey(entity: Int(entity), key: key)] = (
                position, try JSONDecoder().decode([TaggedValue].self, from: data)
            )
        }
        return images
    }

    /// Objects as the parallel arrays a statement unnests.
    private struct ObjectColumns {
        var entities: [Int32] = []
        var keys: [Int64] = []
        var positions: [Int64] = []
        var rows: [ByteBuffer] = []

        mutating func append(_ object: ObjectKey) {
            entities.append(Int32(object.entity))
            keys.append(object.key)
        }

        mutating func append(_ object: ObjectKey, position: Int64, row: [TaggedValue]) throws {
            append(object)
            positions.append(position)
            rows.append(ByteBuffer(bytes: try JSONEncoder().encode(row)))
        }
    }

    /// Log rows as the parallel arrays a statement unnests (a `NULL` author or context name as
    /// an empty string with a flag: postgres-nio binds no `NULL` inside an array).
    private struct LogColumns {
        var positions: [Int64] = [], sequences: [Int64] = []
        var authors: [String] = [], noAuthor: [Bool] = []
        var contexts: [String] = [], noContext: [Bool] = []
        var timestamps: [Date] = []
        var payloads: [ByteBuffer] = []

        init(_ entries: [Entry]) {
            for entry in entries {
                positions.append(entry.position)
                sequences.append(entry.originSequence)
                authors.append(entry.author ?? "")
                noAuthor.append(entry.author == nil)
                contexts.append(entry.contextName ?? "")
                noContext.append(entry.contextName == nil)
                timestamps.append(entry.timestamp)
                payloads.append(ByteBuffer(bytes: entry.payload))
            }
        }
    }
}
