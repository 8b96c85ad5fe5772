import BenchSupport
import Foundation
import NIOCore
import StrataService
import Workloads

/// What one run of a mix at one number of connections measured.
struct LoadResult: Sendable {
    /// Requests answered in the run, successful or not.
    var requests = 0
    /// Requests that failed: an error status, or no answer.
    var errors = 0
    /// What the first failed request got, for the progress line.
    var firstError: String?
    /// The run's length in seconds.
    var seconds = 0.0
    /// Every request's latency in microseconds.
    var latencies: [UInt32] = []
    /// The server's largest resident memory sampled during the run, in bytes.
    var peakResidentBytes: Int?

    /// Requests per second.
    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }

    /// The latency percentile `p` (0...1) in milliseconds (cheapest once ``latencies`` are sorted).
    func latencyMilliseconds(_ p: Double) -> Double? {
        latencies.percentile(p).map { Double($0) / 1000 }
    }

    /// Adds a worker's requests.
    mutating func merge(_ other: LoadResult) {
        requests += other.requests
        errors += other.errors
        firstError = firstError ?? other.firstError
        latencies += other.latencies
    }
}

/// Drives a service with one mix over `connections` connections for a while: each connection
/// a worker that sends its next request as soon as the last is answered (a closed loop), its
/// requests drawn from its own seeded generator.
struct LoadRun: Sendable {
    /// The mix of reads and writes.
    let mix: LoadMix
    /// Concurrent connections, one worker each.
    let connections: Int
    /// The run's length.
    let seconds: Double
    /// The seed of the workers' generators (worker `i` uses `seed + i`).
    let seed: UInt64
    /// Whether each worker deletes employees it created as it creates others, so that the data
    /// set keeps its size (``LoadMix/nextRequest(in:random:created:)``).
    var keepsSize = false

    /// Runs against the service at `baseURL` (process `pid`, whose memory it samples), whose
    /// data is `dataset`.
    func run(baseURL: String, pid: Int32, dataset: ServiceDataset) async -> LoadResult {
        let client = ServiceClient(baseURL: baseURL, connections: connections)
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1e9)
        let memory = MemorySampler(pid: pid)
        let sampling = Task { await memory.run() }
        var result = await withTaskGroup(of: LoadResult.self) { group in
            for worker in 0..<connections {
                group.addTask {
                    await Self.work(
                        client: client, mix: mix, dataset: dataset, until: deadline,
                        random: SplitMix64(seed: seed &+ UInt64(worker)), keepsSize: keepsSize)
                }
            }
            var total = LoadResult()
            for await part in group { total.merge(part) }
            return total
        }
        result.seconds = Double(monotonicNanoseconds() - start) / 1e9
        sampling.cancel()
        memory.sample()
        result.peakResidentBytes = memory.peakBytes
        result.latencies.sort()
        await client.shutdown()
        return result
    }

    /// One worker's requests until `deadline`.
    private static func work(
        client: ServiceClient, mix: LoadMix, dataset: ServiceDataset, until deadline: UInt64, random: SplitMix64,
        keepsSize: Bool
    ) async -> LoadResult {
        var random = random
        var result = LoadResult()
        var created: [Int64]? = keepsSize ? [] : nil
        while monotonicNanoseconds() < deadline {
            let request = mix.nextRequest(in: dataset, random: &random, created: &created)
            let sent = monotonicNanoseconds()
            let failure: String?
            do {
                let answer = try await request.send(client)
                if request.creates, answer.succeeded, created != nil,
                    let record = try? ServiceClient.decode(EmployeeRecord.self, from: answer)
                {
                    created!.append(record.id)
                }
                failure = answer.succeeded ? nil : "HTTP \(answer.status): \(String(buffer: answer.body).prefix(300))"
            } catch {
                failure = "\(error)"
            }
            result.latencies.append(UInt32(clamping: (monotonicNanoseconds() - sent) / 1000))
            result.requests += 1
            if let failure {
                result.errors += 1
                result.firstError = result.firstError ?? failure
            }
        }
        return result
    }
}
