/// The old and new images of the row one operation of a commit changes, kept for the fetch
/// indexes of its entity (`nil`: the row is absent before, or after).
///
/// A commit keeps these in operation order, only for operations on entities with fetch indexes,
/// so that validating and applying the commit walk them alongside its operations.
struct IndexedRowChange: Sendable {
    /// The operation's position in its record.
    var op: Int
    /// The row before the operation.
    var old: Row?
    /// The row after the operation.
    var new: Row?
}
