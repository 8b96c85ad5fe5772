import Synchronization

/// What tells a managed object whether its context is still alive: the context marks its link
/// dead when it is deallocated, so that an object outliving its context reads `nil` for it, as
/// it would through a weak reference. Objects keep the link and an unretained reference to the
/// context, which they read only while the link says it is alive.
///
/// A weak reference would give every context a side table, and every retain and release of a
/// context the runtime's slow path (about 60 more instructions each): with it, a bulk insert
/// took 2.9% more instructions and a fetch of every object 4.2% more (callgrind,
/// `strata-graph-bench` W1 and W6).
///
/// Like the objects, the link is read on the context's queue: a context is not deallocated
/// while a block runs on its queue, so an object read there never sees a context going away.
final class ContextLink: Sendable {
    /// Whether the context is alive.
    private let alive = Atomic<Bool>(true)

    /// The link of a context being made.
    init() {}

    /// Marks the context deallocated: ``isAlive`` is `false` from now on.
    func detach() {
        alive.store(false, ordering: .releasing)
    }

    /// Whether the context is alive.
    var isAlive: Bool { alive.load(ordering: .acquiring) }
}
