import Foundation
import Strata
import StrataStore

/// The entity a mirrored store keeps its cursor in: one object, written in the same local
/// transaction as the changes it accounts for, so a crash can never apply a log entry twice or
/// skip one. In asynchronous mode it also holds the key ranges leased to the instance.
enum MirrorState {
    /// The entity's name.
    static let entityName = "StrataMirrorState"
    /// The key of the one object.
    static let key: Int64 = 1

    /// Adds the entity to `model` unless it has it.
    static func addEntity(to model: ManagedObjectModel) {
        guard model.entitiesByName[entityName] == nil else { return }
        let position = AttributeDescription(name: "position", type: .integer64)
        position.defaultValue = Int64(0)
        model.entities.append(EntityDescription(name: entityName, properties: [position, keysAttribute()]))
    }

    /// Where the cursor lives in the engine store.
    struct Location: Sendable {
        var layout: ReplicationLayout
        /// The cursor's column.
        var column: Int
        /// The leased key ranges' column.
        var keysColumn: Int

        /// - Throws: ``CoreDataError`` `coreData` when the model has no entity ``MirrorState/entityName``,
        ///   or one (the model's own) without its `position` and `keys` attributes.
        init(coordinator: PersistentStoreCoordinator) throws {
            layout = try coordinator.replicationLayout(forEntityNamed: entityName)
            guard let column = layout.columns["position"], let keysColumn = layout.columns["keys"] else {
                throw CoreDataError(
                    .coreData, "the model's entity \(entityName) has no attributes position and keys for the mirror")
            }
            self.column = column
            self.keysColumn = keysColumn
        }

        /// The store's cursor: the last log position it holds (0: none).
        func cursor(in store: Store) throws -> Int64 {
            guard let row = try store.read(layout.storeEntity, key: MirrorState.key),
                case .int(let position) = row[column]
            else { return 0 }
            return position
        }

        /// The key ranges leased to the instance, by engine entity.
        func keys(in store: Store) throws -> [Int: [ClosedRange<Int64>]] {
            guard let row = try store.read(layout.storeEntity, key: MirrorState.key),
                case .data(let data) = row[keysColumn]
            else { return [:] }
            return try JSONDecoder().decode([Int: [[Int64]]].self, from: data).mapValues { $0.map { $0[0]...$0[1] } }
        }

        /// The operation that sets the cursor to `position`.
        func setCursor(_ position: Int64, in store: Store) throws -> StrataStore.Operation {
            try write(cursor: position, keys: nil, in: store)
        }

        /// The operation that records the leased key ranges `keys`.
        func setKeys(_ keys: [Int: [ClosedRange<Int64>]], in store: Store) throws -> StrataStore.Operation {
            try write(cursor: nil, keys: keys, in: store)
        }

        /// Whether a change is the cursor's (the transaction came from the shared log, or is the
        /// mirror's own bookkeeping), as opposed to a local save's.
        func isCursorChange(_ change: HistoryChange) -> Bool {
            change.entity == layout.storeEntity && (change.kind != .update || change.changedColumns.contains(column))
        }

        /// The operation that sets the cursor and the key ranges given, keeping the rest of the object.
        func write(cursor: Int64?, keys: [Int: [ClosedRange<Int64>]]?, in store: Store) throws -> StrataStore.Operation
        {
            var changes: [(Int, Value)] = []
            if let cursor { changes.append((column, .int(cursor))) }
            if let keys {
                changes.append(
                    (
                        keysColumn,
                        .data(try JSONEncoder().encode(keys.mapValues { $0.map { [$0.lowerBound, $0.upperBound] } }))
                    ))
            }
            if var row = try store.read(layout.storeEntity, key: MirrorState.key) {
                for (target, value) in changes { row[target] = value }
                return .update(
                    entity: layout.storeEntity, key: MirrorState.key, row: row, changedColumns: changes.map(\.0))
            }
            var values = [Value](repeating: .null, count: layout.columnCount)
            values[0] = .int(layout.tag)
            values[column] = .int(0)
            for (target, value) in changes { values[target] = value }
            return .insert(entity: layout.storeEntity, key: MirrorState.key, row: Row(values))
        }
    }
}
