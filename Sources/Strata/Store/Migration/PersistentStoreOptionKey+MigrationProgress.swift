public import StrataStore

extension PersistentStoreOptionKey {
    /// `@Sendable (LogRewriteProgress) -> Void`: called after each segment of the log a lightweight
    /// migration rewrites in place (``MigrationMethod/inPlaceRewrite``) when the store is added,
    /// with the segments done and the bytes read and written so far (a Strata addition).
    public static let migrationProgress = "StrataMigrationProgressOption"
}

/// The handler a store description's ``PersistentStoreOptionKey/migrationProgress`` option holds.
public typealias MigrationProgressHandler = @Sendable (LogRewriteProgress) -> Void
