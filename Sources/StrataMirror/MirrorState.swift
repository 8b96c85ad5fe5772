import Strata
import StrataStore

/// The entity a mirrored store keeps its cursor in: one object, written in the same local
/// transaction as the changes it accounts for, so a crash can never apply a log entry twice or
/// skip one.
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
        model.entities.append(EntityDescription(name: entityName, properties: [position]))
    }

    /// Where the cursor lives in the engine store.
    struct Location: Sendable {
        var layout: ReplicationLayout
        var column: Int

        init(coordinator: PersistentStoreCoordinator) throws {
            layout = try coordinator.replicationLayout(forEntityNamed: entityName)
            column = layout.columns["position"]!
        }

        /// The store's cursor: the last log position it holds (0: none).
        func cursor(in store: Store) throws -> Int64 {
            guard let row = try store.read(layout.storeEntity, key: MirrorState.key), case .int(let position) = row[column] else { return 0 }
            return position
        }

        /// The operation that sets the cursor to `position`.
        func setCursor(_ position: Int64, in store: Store) -> StrataStore.Operation {
            var values = [Value](repeating: .null, count: layout.columnCount)
            values[0] = .int(layout.tag)
            values[column] = .int(position)
            if store.contains(layout.storeEntity, key: MirrorState.key) {
                return .update(entity: layout.storeEntity, key: MirrorState.key, row: Row(values), changedColumns: [column])
            }
            return .insert(entity: layout.storeEntity, key: MirrorState.key, row: Row(values))
        }
    }
}
