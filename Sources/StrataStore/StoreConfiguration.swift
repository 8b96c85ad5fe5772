import Logging

/// When a commit counts as done.
public enum Durability: Sendable, Hashable {
    /// The commit returns after the log is on stable storage (`fdatasync`).
    case durable
    /// The commit returns after the log is written to the operating system; a power loss can
    /// lose the newest commits, never corrupt older ones.
    case relaxed
}

/// How a store is opened and run. Every default is documented; `Sendable`. Opening a store
/// checks that each setting is in its range (``validate()``).
public struct StoreConfiguration: Sendable {
    /// When a commit returns. The default is `.durable`.
    public var durability: Durability = .durable
    /// Create the store when the directory does not exist. The default is `true`.
    public var createIfMissing: Bool = true
    /// Open without the write lock, without repairing a torn tail; commits throw. The default is `false`.
    public var readOnly: Bool = false
    /// The size at which the active segment is sealed and a new one started, at most
    /// ``maximumSegmentSize`` (4 GiB less a byte). The default is 64 MiB.
    public var segmentSize: Int = 64 << 20
    /// The uncompressed size a block of rows grows to before it is compressed. The default is 16 KiB.
    public var blockSize: Int = 16 << 10
    /// The bytes of decompressed blocks kept for reads. The default is 256 MiB, which holds the
    /// decompressed rows of about a million typical objects.
    public var cacheSize: Int = 256 << 20
    /// The log bytes written between two background index checkpoints. The default is 64 MiB.
    public var checkpointInterval: Int = 64 << 20
    /// The dead fraction at which background compaction rewrites a sealed segment. The default is 0.5.
    public var compactionThreshold: Double = 0.5
    /// Whether checkpoints and compaction run on a background thread. The default is `true`.
    public var backgroundMaintenance: Bool = true
    /// Whether, once the store is open, a background thread loads the newest blocks of the log
    /// into the free room of the block cache (as a database warms its buffer pool when it
    /// starts), so that the first reads find their blocks decoded. Needs
    /// ``backgroundMaintenance``. The default is `true`.
    public var warmsCacheAfterOpening: Bool = true
    /// The most threads one large commit spreads its work over: making and encoding the rows
    /// of a bulk insert (at least 8,192 rows, at least 4,096 a thread) and compressing its
    /// blocks (also a compaction's, a log rewrite's and a replayed record's). 1 keeps every
    /// commit on the committing thread. More threads shorten one bulk
    /// import; on a server where many contexts commit at once they take cores from the other
    /// commits. The default is the active cores, at most 4.
    public var commitThreads: Int = min(ParallelParts.cores, 4)
    /// Whether commits keep their history (author, context, changes). The default is `true`.
    public var historyTracking: Bool = true
    /// Whether an existing store follows ``historyTracking`` as Core Data's
    /// `NSPersistentHistoryTrackingKey` does: a store that kept no history starts keeping it
    /// from its newest transaction on, and a store that kept history, opened with
    /// ``historyTracking`` false, opens read-only (with a warning) so that no commit goes
    /// unrecorded. The default is `false`: an existing store keeps the setting it was created with.
    public var historyTrackingFollowsConfiguration: Bool = false
    /// The most bytes of history a history consumer may hold back from a `deleteHistory(before:)`
    /// before it is evicted (its next read fails, and it must resync). The default is `nil` (no bound).
    public var historyConsumerLagLimit: Int? = nil
    /// The longest a history consumer that holds back a `deleteHistory(before:)` may go without
    /// advancing before it is evicted, in seconds. The default is `nil` (no bound).
    public var historyConsumerAgeLimit: Double? = nil
    /// Where events are logged: routine ones (open, create, close, log replay, checkpoint) at
    /// `debug`; what an operator must see (a torn tail truncated, an unusable checkpoint,
    /// orphan files removed, compaction, errors) at `info` and above. The default is a logger
    /// labelled `strata.store`.
    public var logger: Logger = Logger(label: "strata.store")
    /// The system-call seam; tests replace it to inject failures.
    package var io: any FileIO = SystemFileIO()
    /// The most rows compaction moves to their new places under one hold of the state lock
    /// while it switches to its output; reads and commits run between the holds.
    var movesPerLockHold = 65_536

    /// Creates a configuration with every default.
    public init() {}
}
