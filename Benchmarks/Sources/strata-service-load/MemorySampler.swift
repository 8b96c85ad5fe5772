/// Samples a process's resident memory (``ServerProcess/residentBytes(pid:)``) while a run goes
/// on, keeping the largest sample. `Sendable`.
final class MemorySampler: Sendable {
    /// The process sampled.
    let pid: Int32
    /// The largest sample so far, in bytes; 0 before the first.
    private let peak = SharedState(0)

    /// How often ``run()`` samples.
    static let interval = Duration.milliseconds(250)

    /// A sampler of process `pid`.
    init(pid: Int32) {
        self.pid = pid
    }

    /// Takes one sample and returns it, in bytes; `nil` when the process is gone.
    @discardableResult
    func sample() -> Int? {
        guard let bytes = ServerProcess.residentBytes(pid: pid) else { return nil }
        peak.withLock { $0 = max($0, bytes) }
        return bytes
    }

    /// The largest sample, in bytes; `nil` before the first.
    var peakBytes: Int? {
        let bytes = peak.withLock { $0 }
        return bytes > 0 ? bytes : nil
    }

    /// Samples every ``interval`` until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            sample()
            try? await Task.sleep(for: Self.interval)
        }
    }
}
