import Metrics

/// The mirror's counters and lag, through swift-metrics, each with the instance as a dimension.
struct MirrorMetrics: Sendable {
    /// Transactions this instance appended to the shared log.
    let exported: Counter
    /// Log entries applied to the local store.
    let applied: Counter
    /// Saves that failed in the mirror (PostgreSQL unreachable, a version conflict).
    let failedSaves: Counter
    /// Re-bootstraps of the local store from a snapshot.
    let bootstraps: Counter
    /// Instances evicted by pruning (they re-bootstrap).
    let evictions: Counter
    /// Log entries pruned.
    let pruned: Counter
    /// From a transaction's commit in PostgreSQL to its application here.
    let lag: Timer
    /// The local store's cursor.
    let cursor: Recorder

    init(instance: String) {
        let dimensions = [("instance", instance)]
        exported = Counter(label: "strata_mirror_exported_transactions", dimensions: dimensions)
        applied = Counter(label: "strata_mirror_applied_transactions", dimensions: dimensions)
        failedSaves = Counter(label: "strata_mirror_failed_saves", dimensions: dimensions)
        bootstraps = Counter(label: "strata_mirror_bootstraps", dimensions: dimensions)
        evictions = Counter(label: "strata_mirror_evicted_instances", dimensions: dimensions)
        pruned = Counter(label: "strata_mirror_pruned_transactions", dimensions: dimensions)
        lag = Timer(label: "strata_mirror_lag", dimensions: dimensions)
        cursor = Recorder(label: "strata_mirror_cursor", dimensions: dimensions, aggregate: false)
    }
}
