/// A value handed to a block of a context's queue, or from it to the caller waiting for the
/// block: Core Data's closures (`perform`, `performBackgroundTask`, completion handlers) are not
/// `@Sendable`, so what they capture crosses to the queue in one of these.
// @unchecked Sendable: the value is touched by one thread at a time, the queue's block or the
// caller it hands the value back to after the queue is done with it, as Core Data's rule for
// contexts and their objects says.
struct QueueBound<Value>: @unchecked Sendable {
    /// The value.
    let value: Value

    /// Wraps `value` for the hand-over.
    init(value: Value) {
        self.value = value
    }
}
