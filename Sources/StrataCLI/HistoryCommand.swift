import ArgumentParser
import Foundation
import StrataStore

/// `strata history PATH [--after N] [--limit N] [--json]`: the committed transactions.
struct HistoryCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the committed transactions the store's history keeps, oldest first.",
        discussion: """
            Opens the store read-only. Each transaction shows its sequence number, timestamp (ISO \
            8601, UTC), author, context and changes: entity, key, kind, changed columns, and the row \
            written or, for a delete, the columns kept in its tombstone.

            With --json, prints JSON Lines: one JSON object per transaction, one per line, with the \
            keys sequence, timestamp, author, context (null when missing) and changes. Each change \
            has entity, key, kind and changedColumns, and for an insert or update the row, for a \
            delete that keeps columns the tombstone: objects keyed by column name.
            """)

    @OptionGroup var store: StoreArguments

    @Option(
        help: ArgumentHelp(
            "Show the transactions after sequence number N. The default is every retained transaction.", valueName: "N")
    )
    var after: UInt64?

    @Option(help: ArgumentHelp("Show at most N transactions.", valueName: "N"))
    var limit: Int?

    @Flag(help: "Print JSON Lines (one JSON object per transaction) instead of text.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "The model the store was written with (.xcdatamodeld or .xcdatamodel): print the history as `strata dump` does, in the object graph's terms (entity names, object URIs, property names, old and new values).",
            valueName: "MODEL"))
    var model: String?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
        if let model {
            try DumpCommand.write(store: store, model: model, after: after, limit: limit, snapshot: false)
            return
        }
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        var printed = 0
        try opened.forEachHistoryTransaction(after: after ?? opened.historyFloor) { transaction in
            let output = TransactionOutput(transaction, schema: opened.schema)
            if json {
                try Output.json(output, pretty: false)
            } else {
                print(output.text)
            }
            printed += 1
            return limit.map { printed < $0 } ?? true
        }
    }
}

/// One history transaction as `strata history` prints it.
struct TransactionOutput: Encodable {
    /// One change of the transaction.
    struct Change: Encodable {
        var entity: String
        var key: PrimaryKey
        var kind: String
        var changedColumns: [String]
        var row: JSONRow?
        var tombstone: JSONRow?

        /// The change as one line of text.
        var text: String {
            let changed = kind == "update" ? " [" + changedColumns.joined(separator: ", ") + "]" : ""
            if let row { return "\(kind) \(entity) \(key)\(changed): \(row.text)" }
            if let tombstone, !tombstone.columns.isEmpty {
                return "\(kind) \(entity) \(key); tombstone: \(tombstone.text)"
            }
            return "\(kind) \(entity) \(key)"
        }
    }

    var sequence: UInt64
    var timestamp: String
    var author: String?
    var context: String?
    var changes: [Change]

    /// Names the entities and columns of `transaction` with `schema`.
    init(_ transaction: HistoryTransaction, schema: Schema) {
        sequence = transaction.sequence
        timestamp = Output.timestamp(transaction.timestamp)
        author = transaction.author
        context = transaction.contextName
        changes = transaction.changes.map { change in
            let entity = schema.entities[change.entity]
            return Change(
                entity: entity.name, key: change.key, kind: Self.name(change.kind),
                changedColumns: change.changedColumns.map { entity.columns[$0].name },
                row: change.row.map { JSONRow($0, of: entity) },
                tombstone: change.tombstone.map { JSONRow($0, of: entity, positions: entity.tombstoneColumns) })
        }
    }

    private static func name(_ kind: ChangeKind) -> String {
        switch kind {
        case .insert: return "insert"
        case .update: return "update"
        case .delete: return "delete"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case sequence, timestamp, author, context, changes
    }

    /// Encodes every key, with `null` for a missing author or context.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(author, forKey: .author)
        try container.encode(context, forKey: .context)
        try container.encode(changes, forKey: .changes)
    }

    /// The transaction as text: a heading line, then one indented line per change.
    var text: String {
        var heading = "#\(sequence)  \(timestamp)"
        if let author { heading += "  author: \(author)" }
        if let context { heading += "  context: \(context)" }
        return ([heading] + changes.map { "    " + $0.text }).joined(separator: "\n")
    }
}
