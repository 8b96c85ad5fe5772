import BenchSupport

extension GraphRunner {
    /// Runs the workloads that each start from fresh stores of their own, after the main group:
    /// W2 (three stores), B1-B3, F1, then W9 (three stores); each only when selected.
    func runSeparateStores<E: SmallSavesEngine & BatchRequestEngine & ChangeTrackingEngine & HistoryEngine>(
        _ type: E.Type, into results: inout EngineResults<GraphMetric>
    ) throws {
        try runSmallSaves(type, into: &results)
        try runBatchRequests(type, into: &results)
        try runChangeTracking(type, into: &results)
        try runHistory(type, into: &results)
    }
}
