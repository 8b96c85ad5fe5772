import ArgumentParser
import Foundation
import Strata

/// `strata dump PATH --model MODEL [--after N] [--format jsonl] [--snapshot]`: the history (and
/// the live objects) as JSON lines of the object graph.
struct DumpCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract:
            "Write the store's history, and with --snapshot every live object, as JSON lines of the object graph.",
        discussion: """
            Opens the store read-only with the model it was written with. With --snapshot, first \
            writes one line per live object: {"kind":"object","entity","uri","values"}. Then one \
            line per history transaction after --after: {"kind":"transaction","transactionNumber", \
            "timestamp","author","contextName","bundleID","processID","changes"}, each change with \
            changeType (insert, update, delete), entity, uri, updatedProperties, and old and new \
            values by property name. Related objects are written as their URIs, dates in ISO \
            8601, data in base64.
            """)

    @OptionGroup var store: StoreArguments

    @Option(help: "The model the store was written with: an .xcdatamodeld or .xcdatamodel directory.")
    var model: String

    @Option(
        help: ArgumentHelp(
            "Write the transactions after transaction number N. The default is every retained one.", valueName: "N"))
    var after: UInt64?

    @Option(help: "The output format; jsonl (JSON lines) is the only one.")
    var format = "jsonl"

    @Flag(help: "Write every live object before the history.")
    var snapshot = false

    func validate() throws {
        guard format == "jsonl" else { throw ValidationError("--format must be jsonl.") }
    }

    func run() throws {
        try Self.write(store: store, model: model, after: after, limit: nil, snapshot: snapshot)
    }

    /// Writes the JSON lines: with `snapshot` the live objects, then at most `limit` transactions
    /// after transaction number `after` (every retained one when `nil`).
    static func write(store: StoreArguments, model: String, after: UInt64?, limit: Int?, snapshot: Bool) throws {
        StoreArguments.logWarningsOnly()
        try store.checkDirectoryExists()
        let objectModel = try ManagedObjectModel(checkedContentsOf: URL(fileURLWithPath: model))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: objectModel)
        let opened = try coordinator.addPersistentStore(
            type: .strata, at: store.url,
            options: [PersistentStoreOptionKey.readOnly: true, PersistentHistoryTrackingKey: true])
        defer { try? coordinator.remove(opened) }
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            if snapshot {
                for entity in objectModel.entities.sorted(by: { $0.entityName < $1.entityName })
                where !entity.isAbstract {
                    let request = FetchRequest<ManagedObject>(entityName: entity.entityName)
                    request.includesSubentities = false
                    for object in try context.fetch(request) {
                        try Self.line([
                            "kind": "object", "entity": entity.entityName,
                            "uri": object.objectID.uriRepresentation().absoluteString,
                            "values": Self.json(object.committedValues(forKeys: nil)),
                        ])
                    }
                }
            }
            // A token in its persisted (Codable) form: the store and the transaction number.
            let token = try after.map { sequence in
                try JSONDecoder().decode(
                    PersistentHistoryToken.self,
                    from: JSONSerialization.data(withJSONObject: ["store": opened.identifier, "sequence": sequence]))
            }
            let result =
                try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
                as? PersistentHistoryResult
            for transaction in (result?.result as? [PersistentHistoryTransaction] ?? []).prefix(limit ?? .max) {
                try Self.line([
                    "kind": "transaction", "transactionNumber": transaction.transactionNumber,
                    "timestamp": Output.timestamp(transaction.timestamp), "author": transaction.author ?? NSNull(),
                    "contextName": transaction.contextName ?? NSNull(), "bundleID": transaction.bundleID,
                    "processID": transaction.processID,
                    "changes": (transaction.changes ?? []).map { change -> [String: Any] in
                        var line: [String: Any] = [
                            "changeType": "\(change.changeType)", "entity": change.changedObjectID.entity.entityName,
                            "uri": change.changedObjectID.uriRepresentation().absoluteString,
                        ]
                        if let updated = change.updatedProperties {
                            line["updatedProperties"] = updated.map(\.name).sorted()
                        }
                        if let old = change.previousValues { line["old"] = Self.json(old) }
                        if let new = change.newValues { line["new"] = Self.json(new) }
                        return line
                    },
                ])
            }
        }
    }

    /// Prints one JSON line, keys sorted.
    static func line(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    /// Property values as JSON values.
    static func json(_ values: [String: Any]) -> [String: Any] {
        values.mapValues(json)
    }

    /// One value as a JSON value: object IDs as URIs, dates in ISO 8601, data in base64,
    /// non-finite numbers as strings, collections element by element.
    static func json(_ value: Any) -> Any {
        switch value {
        case let id as ManagedObjectID: return id.uriRepresentation().absoluteString
        case let object as ManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let date as Date: return Output.timestamp(date)
        case let data as Data: return data.base64EncodedString()
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        case let decimal as Decimal: return "\(decimal)"
        case let double as Double where !double.isFinite: return "\(double)"
        case let float as Float where !float.isFinite: return "\(float)"
        case let string as String: return string
        case let bool as Bool: return bool
        case let number as NSNumber: return number
        case is NSNull: return NSNull()
        case let set as Set<AnyHashable>: return set.map(json)
        case let array as [Any]: return array.map(json)
        case let ordered as NSOrderedSet: return ordered.array.map(json)
        default: return "\(value)"
        }
    }
}
