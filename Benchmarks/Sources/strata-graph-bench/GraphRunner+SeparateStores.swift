import BenchSupport

extension GraphRunner {
    /// Runs the workloads that each start from fresh stores of their own, after the main group:
    /// W2 (three stores), B1-B3, F1, then W9 (three stores); each only when selected, each for
    /// every round of both engines before the next.
    func runSeparateStores(into results: inout SideBySideRounds<GraphMetric>) throws {
        try runSmallSaves(into: &results)
        try runBatchRequests(into: &results)
        try runChangeTracking(into: &results)
        try runHistory(into: &results)
    }
}
