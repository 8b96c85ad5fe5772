import Foundation
import Logging
internal import StrataStore

private let logger = Logger(label: "strata.history")

/// Runs a ``PersistentHistoryChangeRequest``: reads the engine history of its stores, turns it
/// into transactions and changes of the object graph, filters, deletes, and shapes the result.
struct PersistentHistoryReader {
    let request: PersistentHistoryChangeRequest
    let coordinator: PersistentStoreCoordinator
    let mapping: StoreMapping
    /// The stores read, with their engines.
    let stores: [(store: PersistentStore, engine: Store)]

    /// Picks the stores: the token's (or transaction's) store, else the request's affected
    /// stores, else every store keeping history.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` for a token from a store the
    ///   request does not cover; `persistentStoreOperation` for a store without history.
    init(request: PersistentHistoryChangeRequest, coordinator: PersistentStoreCoordinator) throws {
        self.request = request
        self.coordinator = coordinator
        mapping = try coordinator.mapping.get()
        let candidates = request.affectedStores ?? coordinator.persistentStores
        if let token = request.token {
            guard let store = candidates.first(where: { $0.identifier == token.storeIdentifier }) else {
                throw CoreDataError(
                    .persistentHistoryTokenExpired,
                    "the history token is from store \(token.storeIdentifier), which this request does not cover; fetch the history from the start to resync"
                )
            }
            stores = [(store, try Self.engine(of: store))]
        } else if request.affectedStores != nil {
            stores = try candidates.map { ($0, try Self.engine(of: $0)) }
        } else {
            stores = candidates.compactMap { store in (try? Self.engine(of: store)).map { (store, $0) } }
            guard !stores.isEmpty else {
                throw CoreDataError(
                    .persistentStoreOperation,
                    "no store keeps persistent history; add the store with PersistentHistoryTrackingKey set to true")
            }
        }
    }

    /// The engine of a store that keeps history.
    private static func engine(of store: PersistentStore) throws -> Store {
        guard let engine = store.engineStore, engine.configuration.historyTracking else {
            throw CoreDataError(
                .persistentStoreOperation,
                "the store \(store.identifier) keeps no persistent history; add it with PersistentHistoryTrackingKey set to true"
            )
        }
        return engine
    }

    /// Runs the request and returns its result, shaped as its ``PersistentHistoryResultType``.
    func run() throws -> Any? {
        var transactions: [PersistentHistoryTransaction] = []
        var changes: [PersistentHistoryChange] = []
        for (store, engine) in stores {
            if request.deletes {
                let before = try deletionBound(store, engine)
                if request.resultType != .statusOnly {
                    try read(store, engine, after: engine.historyFloor, before: before, into: &transactions, &changes)
                }
                try Self.storeCall { try engine.deleteHistory(before: before) }
                logger.debug(
                    "deleted persistent history", metadata: ["store": "\(store.identifier)", "before": "\(before)"])
            } else {
                try read(store, engine, after: startSequence(engine), before: nil, into: &transactions, &changes)
            }
        }
        switch request.resultType {
        case .statusOnly: return true
        case .count: return transactions.count
        case .objectIDs:
            var seen = Set<ManagedObjectID>()
            return changes.map(\.changedObjectID).filter { seen.insert($0).inserted }
        case .transactionsOnly:
            for transaction in transactions { transaction.changes = nil }
            return transactions
        case .changesOnly: return changes
        case .transactionsAndChanges: return transactions
        }
    }

    /// The sequence a fetch reads after.
    private func startSequence(_ engine: Store) -> UInt64 {
        switch request.bound {
        case .token(let token?): return token.sequence
        case .transaction(let transaction?): return UInt64(transaction.transactionNumber)
        case .token(nil), .transaction(nil), .date: return engine.historyFloor
        }
    }

    /// The sequence a delete deletes below (exclusive).
    private func deletionBound(_ store: PersistentStore, _ engine: Store) throws -> UInt64 {
        switch request.bound {
        case .token(let token?): return token.sequence + 1
        case .transaction(let transaction?): return UInt64(transaction.transactionNumber)
        case .token(nil), .transaction(nil): return engine.lastSequence + 1
        case .date(let date):
            var first = engine.lastSequence + 1
            try Self.storeCall {
                try engine.forEachHistoryTransaction(after: engine.historyFloor) { transaction in
                    guard transaction.timestamp < date else {
                        first = transaction.sequence
                        return false
                    }
                    return true
                }
            }
            return first
        }
    }

    /// Reads the transactions after `start` (and below `before`, when given) into
    /// `transactions`, and their changes into `changes`, keeping what the fetch request selects.
    private func read(
        _ store: PersistentStore, _ engine: Store, after start: UInt64, before: UInt64?,
        into transactions: inout [PersistentHistoryTransaction], _ changes: inout [PersistentHistoryChange]
    ) throws {
        let filter = request.deletes ? nil : request.fetchRequest
        let filtersChanges = filter?.entityName == PersistentHistoryEntities.changeName
        var skip = filter?.fetchOffset ?? 0
        let limit = filter.map { $0.fetchLimit > 0 ? $0.fetchLimit : Int.max } ?? Int.max
        var taken = 0
        let first = changes.count
        var after: Date?
        var plans: [ObjectIdentifier: HistoryEntityPlan] = [:]
        if case .date(let date) = request.bound, !request.deletes { after = date }
        try Self.storeCall {
            try engine.forEachHistoryTransaction(after: start) { record in
                if let before, record.sequence >= before { return false }
                if let after, record.timestamp <= after { return true }
                let transaction = makeTransaction(record, store: store)
                var kept = try makeChanges(record, of: transaction, store: store, plans: &plans)
                if filtersChanges, let predicate = filter?.predicate {
                    kept = kept.filter { matches(predicate, $0) }
                    guard !kept.isEmpty else { return true }
                } else if !filtersChanges, let predicate = filter?.predicate, !matches(predicate, transaction) {
                    return true
                }
                if filtersChanges {
                    let dropped = min(skip, kept.count)
                    kept.removeFirst(dropped)
                    skip -= dropped
                    kept = Array(kept.prefix(limit - taken))
                    guard !kept.isEmpty else { return true }
                    taken += kept.count
                } else {
                    guard skip == 0 else {
                        skip -= 1
                        return true
                    }
                    taken += 1
                }
                transaction.changes = kept
                transactions.append(transaction)
                changes += kept
                return taken < limit
            }
        }
        if [.transactionsAndChanges, .changesOnly].contains(request.resultType) {
            deferToManyValues(of: changes[first...], store: store, engine: engine)
        }
    }

    /// Whether a history transaction or change meets `predicate`.
    private func matches(_ predicate: FetchPredicate, _ object: AnyObject) -> Bool {
        predicate.evaluate(with: object, valueForKey: PersistentHistoryEntities.value(of:forKey:))
    }

    /// The object-graph transaction of an engine history record, without its changes.
    private func makeTransaction(_ record: HistoryTransaction, store: PersistentStore) -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(
            timestamp: record.timestamp, transactionNumber: Int64(record.sequence), storeID: store.identifier,
            contextName: record.contextName, author: record.author, bundleID: record.bundleID ?? "",
            processID: record.processID.map(String.init) ?? "")
    }

    /// The object-graph changes of an engine history record. Rows of join entities (to-many
    /// relationships kept in join tables) are not objects: they make an update of each object
    /// whose relationship they changed (see ``relationshipChanges(_:of:store:after:plans:)``).
    ///
    /// - Parameter plans: the plans of the entities met so far in the fetch; those of the
    ///   record's entities are added.
    private func makeChanges(
        _ record: HistoryTransaction, of transaction: PersistentHistoryTransaction, store: PersistentStore,
        plans: inout [ObjectIdentifier: HistoryEntityPlan]
    ) throws -> [PersistentHistoryChange] {
        let listsChanges = request.resultType != .changesOnly
        var changes: [PersistentHistoryChange] = []
        changes.reserveCapacity(record.changes.count)
        for (index, change) in record.changes.enumerated() {
            guard let family = mapping.entitiesByTag[change.entity], let entity = Self.entity(of: change, in: family)
            else { continue }
            let id = ObjectIdentifier(entity)
            if plans[id] == nil {
                guard let layout = mapping.layouts[entity.entityName] else { continue }
                plans[id] = HistoryEntityPlan(
                    entity: entity, layout: layout, storeIdentifier: store.identifier, coordinator: coordinator)
            }
            let type: PersistentHistoryChangeType =
                change.kind == .insert ? .insert : change.kind == .update ? .update : .delete
            var updated: Set<PropertyDescription>?
            var previous: [String: Any]?
            var new: [String: Any]?
            let values = plans[id]!.values
            if let row = change.row {
                new = try values.values(of: row, columns: type == .update ? change.changedColumns : nil)
            }
            if type == .update {
                updated = plans[id]!.updatedProperties(change.changedColumns)
                if let row = change.previousRow {
                    previous = try values.values(of: row, columns: change.changedColumns)
                }
            } else if type == .delete, let row = change.previousRow {
                previous = try values.values(of: row)
            }
            var tombstone: [AnyHashable: Any]?
            if type == .delete {
                let layout = plans[id]!.layout
                var kept: [AnyHashable: Any] = [:]
                for case let attribute as AttributeDescription in entity.properties
                where attribute.preservesValueInHistoryOnDeletion {
                    guard let row = change.tombstone, let column = layout.columns[attribute.name] else { continue }
                    if let value = try RowDecoding.attributeValue(row[column], for: attribute, coordinator: coordinator)
                    {
                        kept[attribute.name] = value
                    }
                }
                tombstone = kept
            }
            changes.append(
                PersistentHistoryChange(
                    changeID: Int64(record.sequence) << 24 | Int64(index & 0xFF_FFFF),
                    changedObjectID: ManagedObjectID(
                        entity: entity, storeIdentifier: store.identifier, primaryKey: change.key),
                    changeType: type, tombstone: tombstone, updatedProperties: updated, previousValues: previous,
                    newValues: new, transaction: transaction,
                    transactionListsChanges: listsChanges))
        }
        return try relationshipChanges(record, of: transaction, store: store, after: changes, plans: &plans)
    }

    /// The concrete entity of a changed row: from its entity tag (a deleted row's from its prior
    /// row or tombstone), else (a delete saved before stores kept prior rows, whose tombstone
    /// lacks the tag) the hierarchy's root entity.
    private static func entity(of change: HistoryChange, in family: [Int64: EntityDescription]) -> EntityDescription? {
        if case .int(let tag)? = (change.row ?? change.previousRow ?? change.tombstone)?[0], let entity = family[tag] {
            return entity
        }
        return family[1]
    }

    /// Runs an engine call, turning a deleted history into ``CoreDataError/Code/persistentHistoryTokenExpired``.
    static func storeCall(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as StoreError where error.code == .historyUnavailable {
            throw CoreDataError(
                .persistentHistoryTokenExpired,
                "the history token expired: \(error.message); fetch the history from the start to resync",
                underlyingError: error)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOperation, "the persistent history cannot be read: \(error.message)",
                underlyingError: error)
        }
    }
}
