import Synchronization

/// Whether a model object may still be edited: set once, when its ``ManagedObjectModel`` is
/// frozen, never cleared.
///
/// The flag is atomic (store with release, load with acquire), so a thread that sees it set also
/// sees every value and cache written before the model was frozen.
struct FreezeFlag: ~Copyable, Sendable {
    private let state = Atomic<Bool>(false)

    /// Creates a flag that is not set.
    init() {}

    /// Whether the flag is set.
    var isSet: Bool { state.load(ordering: .acquiring) }

    /// Sets the flag.
    func set() { state.store(true, ordering: .releasing) }
}

/// Stops the process because a frozen model object was edited, as Core Data raises
/// "Can't modify an immutable model".
///
/// - Parameter what: the member that was set, such as `"AttributeDescription.name of Employee.salary"`.
func immutableModelViolation(_ what: String) -> Never {
    fatalError(
        "Can't modify an immutable model: \(what) was set after the model was frozen (a persistent store coordinator uses it); build a new model to change it"
    )
}
