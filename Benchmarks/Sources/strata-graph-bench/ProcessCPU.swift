import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time the process used, user and system, from `getrusage`: beside a step's wall time,
/// how many cores it kept busy (W2.concurrent16 runs 16 writers on however many cores there are).
struct ProcessCPU {
    /// User CPU time, in seconds.
    var userSeconds: Double
    /// System CPU time, in seconds.
    var systemSeconds: Double

    /// The process's CPU time so far.
    static func now() -> ProcessCPU {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return ProcessCPU(userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime))
    }

    /// The CPU time used since `start`.
    func since(_ start: ProcessCPU) -> ProcessCPU {
        ProcessCPU(userSeconds: userSeconds - start.userSeconds, systemSeconds: systemSeconds - start.systemSeconds)
    }

    /// User and system time together, in seconds.
    var totalSeconds: Double { userSeconds + systemSeconds }

    /// `value` in seconds.
    private static func seconds(_ value: timeval) -> Double {
        Double(value.tv_sec) + Double(value.tv_usec) / 1e6
    }
}
