/// Which store a service runs on. `Sendable`.
public enum BackendKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Strata, through its Core Data API: a `PersistentContainer` with persistent history.
    case strata
    /// SQLite through GRDB: a `DatabasePool` in WAL mode, with a trigger-fed change table.
    case grdb

    /// The name the command line and the environment use.
    public var description: String { rawValue }
}
