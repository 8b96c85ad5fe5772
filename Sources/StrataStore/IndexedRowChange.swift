/// The old and new images of the row one operation of a commit changes, kept for the fetch
/// indexes of its entity (`nil`: the row is absent before, or after): only the fetch-indexed
/// columns' values.
///
/// A commit keeps these in operation order, only for operations on entities with fetch indexes,
/// so that validating and applying the commit walk them alongside its operations.
struct IndexedRowChange: Sendable {
    /// The operation's position in its record.
    var op: Int
    /// The indexed values of the row before the operation.
    var old: IndexedValues?
    /// The indexed values of the row after the operation.
    var new: IndexedValues?
}
