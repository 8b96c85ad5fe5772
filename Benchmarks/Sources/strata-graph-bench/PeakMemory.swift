import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The peak resident memory of the process during one step, attributable to that step although
/// both engines run in one process.
///
/// Before the step, freed heap memory is handed back to the system (`malloc_trim(0)`) and the
/// kernel's high-water mark is reset to the current resident size (writing `5` to
/// `/proc/self/clear_refs`); after it, `VmHWM` of `/proc/self/status` is the step's peak. The
/// figure is the growth, peak minus the resident size before the step: what the step itself
/// held at most. When the mark cannot be reset (another kernel), the growth is measured against
/// the process's lifetime peak and ``isResetPeak`` is false; run one engine per process
/// (`--only strata`, `--only sqlite`) for figures that are attributable then.
struct PeakMemory {
    /// The resident size before the step, in bytes.
    var baselineBytes: Int
    /// The peak resident size during the step (the process's high-water mark after it), in bytes.
    var peakBytes: Int
    /// Whether the high-water mark was reset before the step.
    var isResetPeak: Bool

    /// The growth of the resident size during the step, in MB (2^20 bytes).
    var growthMB: Double { Double(max(0, peakBytes - baselineBytes)) / 1_048_576 }
    /// The peak resident size, in MB.
    var peakMB: Double { Double(peakBytes) / 1_048_576 }

    /// Runs `body` and measures its peak memory.
    static func measure(_ body: () throws -> Void) throws -> PeakMemory {
        trimHeap()
        let reset = resetPeak()
        let baseline = try status("VmRSS")
        try body()
        return PeakMemory(baselineBytes: baseline, peakBytes: try status("VmHWM"), isResetPeak: reset)
    }

    /// Records the growth as `metric`, and the baseline, peak and method under `detail`.
    func record(as metric: GraphMetric, detail: String, into results: inout EngineResults<GraphMetric>) {
        results.figures[metric] = growthMB
        results.details["\(detail).peakRSSMB"] = peakMB
        results.details["\(detail).baselineRSSMB"] = Double(baselineBytes) / 1_048_576
        results.details["\(detail).peakWasReset"] = isResetPeak ? 1 : 0
    }

    /// Hands freed heap memory back to the system with glibc's `malloc_trim(0)` (looked up at run
    /// time: Swift's Glibc module does not export it), so that one step's freed memory is not
    /// resident during the next.
    private static func trimHeap() {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Resets the kernel's high-water mark of the resident size to the current size.
    private static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// A field of `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
    private static func status(_ field: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kilobytes = Int(parts[1]) { return kilobytes * 1024 }
        }
        throw BenchError("no \(field) in /proc/self/status")
    }
}
