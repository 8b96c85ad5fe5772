import Synchronization

/// A flag one thread raises and another polls, in an object of its own so that a background
/// thread can hold it without holding what owns it.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// Creates a lowered flag.
    init() {}

    /// Raises the flag.
    func raise() { raised.store(true, ordering: .releasing) }

    /// Whether the flag was raised.
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
