import StrataStore

/// One object of the engine store.
struct ObjectKey: Hashable, Sendable {
    var entity: Int
    var key: Int64
}

/// The local saves an asynchronous instance has not exported yet, oldest first: they will take
/// log positions after every entry already in the log, so what they changed wins over those
/// entries when the instance applies them (everyone else applies them in log order too).
struct MirrorPending: Sendable {
    /// The saves, from the store's persistent history.
    private(set) var transactions: [HistoryTransaction] = []
    /// The columns the saves updated, by object; `nil` for an object they inserted or deleted.
    private var columns: [ObjectKey: Set<Int>?] = [:]

    /// No pending saves (synchronous mode).
    init() {}

    /// The pending `transactions`, oldest first.
    init(_ transactions: [HistoryTransaction]) {
        self.transactions = transactions
        index()
    }

    /// The columns of `object` an entry from the log must leave alone: `nil` for the whole
    /// object, empty when it may change them all.
    func protectedColumns(of object: ObjectKey) -> Set<Int>? {
        guard let kept = columns[object] else { return [] }
        return kept
    }

    /// Drops the saves up to `sequence`: the log holds them (a save is exported after the ones before it).
    mutating func drop(through sequence: UInt64) {
        guard transactions.contains(where: { $0.sequence <= sequence }) else { return }
        transactions.removeAll { $0.sequence <= sequence }
        index()
    }

    /// The export cursor that keeps every pending save: just below the oldest, or `newest`
    /// when none is pending.
    func exported(through newest: UInt64) -> UInt64 {
        transactions.first.map { $0.sequence - 1 } ?? newest
    }

    private mutating func index() {
        columns = [:]
        for transaction in transactions {
            for change in transaction.changes {
                let object = ObjectKey(entity: change.entity, key: change.key)
                switch (change.kind, columns[object]) {
                case (.update, .none): columns[object] = .some(Set(change.changedColumns))
                case (.update, .some(.some(let kept))): columns[object] = .some(kept.union(change.changedColumns))
                default: columns[object] = .some(nil)  // inserted or deleted: the whole object
                }
            }
        }
    }
}
