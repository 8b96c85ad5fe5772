import BenchSupport
import Foundation
import Synchronization

/// W8's second thread: reads keys in a loop, timing each read, until told to stop.
///
/// `Sendable`: the flags are atomics and the samples sit behind a mutex.
final class ConcurrentReadLoop: Sendable {
    /// One read: when it started and how long it took, in nanoseconds.
    struct Sample: Sendable {
        var start: UInt64
        var latency: UInt64
    }

    private let reader: any ConcurrentReader
    private let keys: [Int64]
    private let stopRequested = Atomic<Bool>(false)
    private let readsDone = Atomic<Int>(0)
    private let outcome = Mutex<Result<[Sample], any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(reader: any ConcurrentReader, keys: [Int64]) {
        precondition(!keys.isEmpty, "the reader needs keys")
        self.reader = reader
        self.keys = keys
    }

    /// Starts the thread and returns once it has done its first read.
    func start() {
        let thread = Thread { [self] in self.loop() }
        thread.name = "strata-bench.reader"
        thread.start()
        while readsDone.load(ordering: .acquiring) == 0, outcomeIsEmpty {
            usleep(100)
        }
    }

    private var outcomeIsEmpty: Bool { outcome.withLock { $0 == nil } }

    /// Stops the thread, waits for it, and returns every read it timed.
    func stop() throws -> [Sample] {
        stopRequested.store(true, ordering: .releasing)
        finished.wait()
        return try outcome.withLock { $0! }.get()
    }

    private func loop() {
        var samples: [Sample] = []
        samples.reserveCapacity(1 << 16)
        var index = 0
        let result = Result<[Sample], any Error> {
            while !stopRequested.load(ordering: .acquiring) {
                let key = keys[index]
                index = index + 1 == keys.count ? 0 : index + 1
                let start = monotonicNanoseconds()
                guard try reader.read(key) else { throw BenchError("concurrent read of \(key) found no row") }
                samples.append(Sample(start: start, latency: monotonicNanoseconds() - start))
                readsDone.add(1, ordering: .releasing)
            }
            return samples
        }
        outcome.withLock { $0 = result }
        finished.signal()
    }
}
