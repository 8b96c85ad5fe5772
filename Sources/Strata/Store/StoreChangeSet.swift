internal import StrataStore

/// The part of one save that one store receives (the role of Core Data's
/// `NSSaveChangesRequest` as a store gets it): the objects it inserts, updates and deletes, who
/// saves them, and what its commit requires of the commits since the save's checks. The
/// context gathers it; ``StoreWriter`` turns it into the engine commit.
struct StoreChangeSet {
    /// Objects new to the store, with permanent IDs.
    var inserted: [ManagedObject] = []
    /// Stored objects whose changes the store writes.
    var updated: [ManagedObject] = []
    /// Stored objects the store deletes, with their join rows.
    var deleted: [ManagedObject] = []
    /// The saving context's transaction author (history's `author`).
    var author: String?
    /// The saving context's name (history's `contextName`).
    var contextName: String?
    /// What the commit requires of the commits since the save's checks (`nil`: nothing).
    var condition: CommitCondition?
    /// History consumer cursors the commit moves with it, by consumer name.
    var consumerCursors: [String: UInt64] = [:]
}
