import Synchronization
extension Store {
    /// Whether ``close()`` was called: every later read and commit throws `closed`.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }
}
