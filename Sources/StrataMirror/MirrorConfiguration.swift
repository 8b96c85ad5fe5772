import Logging
import PostgresNIO

/// How a ``MirroredPersistentContainer`` reaches PostgreSQL and shares its store with the other
/// instances (StrataMirror's counterpart of the CloudKit container options of Core Data).
public struct MirrorConfiguration: Sendable {
    /// When a save reaches the shared log.
    public enum Mode: Sendable, Hashable {
        /// A save is one PostgreSQL transaction (versions checked, log appended) before it
        /// commits locally: a save that returns is in the shared log; conflicts surface in the save.
        case synchronous
        /// A save commits locally at once; the mirror's tail exports it to the shared log in the
        /// background, from the store's persistent history after an export cursor kept in the
        /// store (as CloudKit mirroring does). Saves go on while PostgreSQL is unreachable and
        /// are exported when it is back. Concurrent changes to one object are resolved by the
        /// log's order, attribute by attribute: the later position wins on every instance.
        case asynchronous
    }

    /// The PostgreSQL server and database holding the shared log.
    public var postgres: PostgresConnection.Configuration
    /// This instance's name, unique among the instances sharing the database and the same
    /// across its restarts: the log's idempotency key and the cursor's owner.
    public var instanceName: String
    /// When saves reach the shared log. The default is ``Mode/synchronous``.
    public var mode: Mode = .synchronous
    /// How often the tail polls the log when no notification wakes it. The default is 100 ms.
    public var pollInterval: Duration = .milliseconds(100)
    /// How many log entries one catch-up step reads and applies at most. The default is 1,000.
    public var batchSize: Int = 1_000
    /// How often an instance prunes the shared log. The default is 30 s.
    public var pruneInterval: Duration = .seconds(30)
    /// An instance more than this many transactions behind the log's head no longer holds
    /// pruning back; once the log is pruned past its cursor it re-bootstraps from a snapshot.
    /// The default is 1,000,000.
    public var maximumLag: Int64 = 1_000_000
    /// An instance not seen for this long no longer holds pruning back. The default is 1 hour.
    public var maximumSilence: Duration = .seconds(3_600)
    /// How often the local store writes a checkpoint. The default is 60 s.
    public var checkpointInterval: Duration = .seconds(60)
    /// How many primary keys an instance leases from PostgreSQL at a time for each entity (in
    /// asynchronous mode, and the reserve it keeps for inserting while PostgreSQL is
    /// unreachable). The default is 10,000.
    public var keyBlockSize: Int64 = 10_000
    /// Where the mirror logs (routine events at debug).
    public var logger: Logger

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - postgres: the server and database of the shared log.
    ///   - instanceName: this instance's stable, unique name.
    ///   - logger: where the mirror logs.
    public init(
        postgres: PostgresConnection.Configuration, instanceName: String,
        logger: Logger = Logger(label: "strata.mirror")
    ) {
        self.postgres = postgres
        self.instanceName = instanceName
        self.logger = logger
    }
}
