import BenchSupport
import Foundation
import StrataService
import Workloads

/// What a run of the change feed's lag measured.
struct FeedLagResult: Sendable {
    /// Employees created and acknowledged.
    var writes = 0
    /// Writes that failed.
    var errors = 0
    /// The run's length in seconds.
    var seconds = 0.0
    /// For each acknowledged write whose event arrived, the microseconds from its acknowledgement
    /// to its event (0 when the event came first), sorted.
    var lags: [UInt32] = []
    /// Acknowledged writes whose event never arrived.
    var missing = 0

    /// Acknowledged writes per second.
    var writesPerSecond: Double { seconds > 0 ? Double(writes) / seconds : 0 }

    /// The lag percentile `p` (0...1) in milliseconds.
    func lagMilliseconds(_ p: Double) -> Double? {
        lags.percentile(p).map { Double($0) / 1000 }
    }
}

/// The change feed's lag under a steady write load: a client follows `GET /feed` from the live
/// tail while `connections` writers create employees at `writesPerSecond` in all (each on its
/// own schedule, sending at once when behind it), and each created employee's insert event is
/// timed from the moment its `201` reached the writer. The commit happens between the request
/// and that answer, so the figure is the lag a client sees from its acknowledgement.
struct FeedLagRun: Sendable {
    /// The rate of writes, across the writers.
    let writesPerSecond: Int
    /// The writers (connections).
    let connections: Int
    /// The run's length.
    let seconds: Double
    /// The seed of the writers' generators.
    let seed: UInt64

    /// How long the feed may take to deliver the last writes after the run.
    static let drainTimeout: Double = 10

    /// What the writers and the feed share: acknowledgements waiting for their event, events
    /// waiting for their acknowledgement, and the lags measured.
    private struct Pairing {
        var acknowledged: [Int64: UInt64] = [:]
        var early: [Int64: UInt64] = [:]
        var lags: [UInt32] = []

        mutating func acknowledge(_ id: Int64, at time: UInt64) {
            if early.removeValue(forKey: id) != nil {
                lags.append(0)
            } else {
                acknowledged[id] = time
            }
        }

        mutating func deliver(_ id: Int64, at time: UInt64) {
            if let acknowledgedAt = acknowledged.removeValue(forKey: id) {
                lags.append(UInt32(clamping: (time &- acknowledgedAt) / 1000))
            } else {
                early[id] = time
            }
        }
    }

    /// Runs against the service at `baseURL`, whose data is `dataset`; a feed that fails shows as
    /// writes whose events are missing.
    func run(baseURL: String, dataset: ServiceDataset) async -> FeedLagResult {
        let feedClient = ServiceClient(baseURL: baseURL, connections: 1, readTimeout: nil)
        let client = ServiceClient(baseURL: baseURL, connections: connections)
        let result = await measure(feedClient: feedClient, client: client, dataset: dataset)
        await client.shutdown()
        return result
    }

    /// ``run(baseURL:dataset:)`` with its clients; shuts the feed's client down.
    private func measure(feedClient: ServiceClient, client: ServiceClient, dataset: ServiceDataset) async
        -> FeedLagResult
    {
        let pairing = SharedState(Pairing())
        let (connected, signalConnected) = AsyncStream<Void>.makeStream()
        let feed = Task {
            defer { signalConnected.finish() }
            try await FeedReader.follow(feedClient, after: nil, connected: { signalConnected.yield() }) { transaction in
                let now = monotonicNanoseconds()
                for change in transaction.changes where change.entity == "Employee" && change.type == "insert" {
                    pairing.withLock { $0.deliver(change.id, at: now) }
                }
            }
        }
        for await _ in connected { break }
        let interval = 1e9 / Double(writesPerSecond)
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1e9)
        let counts = await withTaskGroup(of: (writes: Int, errors: Int).self) { group in
            for writer in 0..<connections {
                group.addTask {
                    var random = SplitMix64(seed: seed &+ UInt64(writer))
                    var writes = 0
                    var errors = 0
                    for slot in stride(from: writer, to: Int.max, by: connections) {
                        let due = start + UInt64(Double(slot) * interval)
                        guard due < deadline else { break }
                        let now = monotonicNanoseconds()
                        if due > now { try? await Task.sleep(for: .nanoseconds(due - now)) }
                        let answer = try? await client.send(.POST, "/employees", dataset.newEmployee(&random))
                        if let answer, let record = try? ServiceClient.decode(EmployeeRecord.self, from: answer) {
                            let acknowledgedAt = monotonicNanoseconds()
                            pairing.withLock { $0.acknowledge(record.id, at: acknowledgedAt) }
                            writes += 1
                        } else {
                            errors += 1
                        }
                    }
                    return (writes, errors)
                }
            }
            return await group.reduce(into: (writes: 0, errors: 0)) { $0.writes += $1.writes; $0.errors += $1.errors }
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let drainDeadline = Date().addingTimeInterval(Self.drainTimeout)
        while pairing.withLock({ !$0.acknowledged.isEmpty }), Date() < drainDeadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        // Closing the feed's connection ends the stream the task reads.
        feed.cancel()
        await feedClient.shutdown()
        _ = await feed.result
        return pairing.withLock { pairing in
            FeedLagResult(
                writes: counts.writes, errors: counts.errors, seconds: seconds, lags: pairing.lags.sorted(),
                missing: pairing.acknowledged.count)
        }
    }
}
