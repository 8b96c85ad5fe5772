/// What a commit requires of the commits that came after the state it was decided on
/// (optimistic concurrency control): none of them wrote one of ``rows`` or a row of one of
/// ``entities``. `Sendable`.
///
/// A writer reads at sequence ``since`` (checking conflicts, uniqueness, ...), builds a
/// transaction from what it read and commits it with this condition; the store checks it in its
/// commit critical section, against the commits after ``since`` and the earlier commits of the
/// same group, and refuses the commit with ``StoreError/Code/writeConflict`` when it fails. The
/// writer then reads again and retries. The check holds no lock across the group's write or
/// `fdatasync`, so conditional commits of several writers still share one.
public struct CommitCondition: Sendable, Hashable {
    /// The newest sequence the writer's reads saw (``Store/lastSequence`` before it read).
    public var since: UInt64
    /// The rows, by entity, that no later commit may have written (inserted, updated or deleted).
    public var rows: [Int: Set<PrimaryKey>]
    /// The entities no later commit may have written any row of.
    public var entities: Set<Int>

    /// Creates a condition on the commits after `since`.
    public init(since: UInt64, rows: [Int: Set<PrimaryKey>] = [:], entities: Set<Int> = []) {
        self.since = since
        self.rows = rows
        self.entities = entities
    }

    /// Whether a commit that wrote `written` (keys by entity) breaks the condition.
    func isBroken(by written: [Int: [PrimaryKey]]) -> Bool {
        for (entity, keys) in written {
            if entities.contains(entity) { return true }
            if let watched = rows[entity], keys.contains(where: watched.contains) { return true }
        }
        return false
    }
}

/// The rows written by the store's recent commits, newest last, for checking
/// ``CommitCondition``s. Bounded: a condition older than what it remembers fails.
struct RecentCommits: Sendable {
    /// How many commits are remembered.
    static let capacity = 4096
    /// Every commit after this sequence is remembered (`nil` until the first commit is checked).
    var floor: UInt64?
    /// The keys each remembered commit wrote, by entity, oldest first.
    var commits: [(sequence: UInt64, written: [Int: [PrimaryKey]])] = []

    /// Whether `condition` still holds against the remembered commits.
    func holds(_ condition: CommitCondition) -> Bool {
        guard let floor, condition.since >= floor else { return false }
        for commit in commits.reversed() {
            guard commit.sequence > condition.since else { break }
            if condition.isBroken(by: commit.written) { return false }
        }
        return true
    }

    /// Remembers a commit, forgetting the oldest beyond ``capacity``.
    mutating func record(sequence: UInt64, written: [Int: [PrimaryKey]]) {
        commits.append((sequence, written))
        if commits.count > Self.capacity + Self.capacity / 4 {
            let dropped = commits.count - Self.capacity
            floor = commits[dropped - 1].sequence
            commits.removeFirst(dropped)
        }
    }
}

extension RecordOp {
    /// The keys `ops` write, by entity, in operation order (a key written twice is listed twice):
    /// a list rather than a set, since a bulk commit's keys are many and a condition rarely reads them.
    static func written(_ ops: [RecordOp]) -> [Int: [PrimaryKey]] {
        var written: [Int: [PrimaryKey]] = [:]
        // Run by run of one entity: one dictionary access a run rather than one a key.
        var start = 0
        while start < ops.count {
            var end = start + 1
            while end < ops.count && ops[end].entity == ops[start].entity { end += 1 }
            // Each key read in place: a copy of an operation would retain its changed columns.
            written[ops[start].entity, default: []].append(contentsOf: (start..<end).lazy.map { ops[$0].key })
            start = end
        }
        return written
    }
}
