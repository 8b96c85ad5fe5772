import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The budget and the figures of one operation of the kill soak (`make soak`): a child process
/// doing the operation is killed with SIGKILL at a random moment inside it, round after round,
/// and the store is checked against the work the child acknowledged.
///
/// `STRATA_SOAK_KILLS` (shared evenly by ``operations`` operations) and `STRATA_SOAK_SECONDS`
/// (counted from the first operation's start, for all of them) bound a soak; without either, each
/// operation runs ``shortKills`` kills, the version `make test` runs so the harness cannot rot.
/// The delay before a kill is drawn from 0 to 1.1 times the operation's measured length (a run
/// that ends before its kill measures it), so most kills land inside the operation and some just
/// after it.
package struct KillSoak {
    /// The operations that share `STRATA_SOAK_KILLS`: a durable save, compaction, a lightweight
    /// migration, batch requests, `strata replay` and a mirror apply.
    package static let operations = 6
    /// Kills per operation when no soak is asked for.
    package static let shortKills = 3

    /// The operation's name in the figures.
    package let operation: String
    /// What one acknowledged unit is, in the figures ("saves", "rows", …).
    package let unit: String
    /// Kills this operation is to make.
    package let targetKills: Int
    /// When to stop whatever the kills.
    package let deadline: ContinuousClock.Instant
    /// When the first round started.
    private let started = ContinuousClock.now
    /// The operation's length as measured by the runs that ended before their kill.
    private var measured: Duration

    /// Children killed inside (or just after) the operation.
    package private(set) var kills = 0
    /// Children that ended before their kill: each measured the operation.
    package private(set) var completions = 0
    /// Units of work the children acknowledged, all found after the kills.
    package var acknowledged = 0
    /// Acknowledged units missing after a kill.
    package var lost = 0
    /// Units found twice, or applied beyond what the store records.
    package var duplicated = 0
    /// Stores that did not open or did not verify clean after a kill.
    package var unopenable = 0

    /// A soak of `operation` counting `unit`, with `estimate` as the operation's length until a
    /// run measures it.
    package init(operation: String, unit: String, estimate: Duration) {
        self.operation = operation
        self.unit = unit
        measured = estimate
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["STRATA_SOAK_KILLS"].flatMap(Int.init)
        let seconds = environment["STRATA_SOAK_SECONDS"].flatMap(Double.init)
        // Rounded up, so that the operations make at least the kills asked for.
        let share = ((kills ?? 10_000) + Self.operations - 1) / Self.operations
        targetKills = Self.isSoaking ? max(1, share) : Self.shortKills
        deadline = Self.firstStart + .milliseconds(Int64((seconds ?? 7_200) * 1_000))
    }

    /// When the first operation of this process's soak started. The test runner runs as many
    /// operations at once as it has threads for, and one that reaches its kills leaves its
    /// thread to the next; every operation stops at the same deadline, so the soak lasts at most
    /// its `STRATA_SOAK_SECONDS` however its operations are scheduled.
    private static let firstStart = ContinuousClock.now

    /// Whether a soak was asked for (`STRATA_SOAK_KILLS` or `STRATA_SOAK_SECONDS` set), rather
    /// than the short version of `make test`.
    package static var isSoaking: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["STRATA_SOAK_KILLS"] != nil || environment["STRATA_SOAK_SECONDS"] != nil
    }

    /// Whether another round is due: kills remain and the deadline has not passed.
    package var continues: Bool { kills < targetKills && ContinuousClock.now < deadline }

    /// A delay for the next kill: 0 to 1.1 times the measured length.
    package func nextDelay(using generator: inout some RandomNumberGenerator) -> Duration {
        measured * Double.random(in: 0...1.1, using: &generator)
    }

    /// Sleeps `delay`, then kills `child` unless it ended; records which, and a run that ended
    /// as a measure of the operation's length (a moving average over runs; a child still running
    /// past the measured length lengthens it by a quarter). Returns how it ended.
    package mutating func kill(_ child: ChildProcess, after delay: Duration, started: ContinuousClock.Instant)
        -> ChildExit
    {
        let deadline = started + delay
        while ContinuousClock.now < deadline, child.poll() == nil { usleep(500) }
        child.sigkill()
        let end = child.wait()
        if end == .signalled(SIGKILL) {
            kills += 1
            // Still running past the measured length: the operation takes longer than measured.
            if delay > measured { measured = measured * 1.25 }
        } else {
            completions += 1
            let length = ContinuousClock.now - started
            measured = completions == 1 ? length : (measured * 3 + length) / 4
        }
        return end
    }

    /// What made a store count as unopenable, for the failure message.
    package private(set) var failures: [String] = []

    /// Counts the store unopenable after a kill, for the reason `what` (such as the error that
    /// opening it threw).
    package mutating func recordUnopenable(_ what: String) {
        unopenable += 1
        failures.append(what)
    }

    /// Runs `problems` (a verification of the closed store, its problems as text) and counts the
    /// store unopenable when it finds any or throws.
    package mutating func verify(_ problems: () throws -> [String]) {
        do {
            let found = try problems()
            if !found.isEmpty { recordUnopenable("the store does not verify clean: \(found.prefix(5))") }
        } catch {
            recordUnopenable("the store cannot be verified: \(error)")
        }
    }

    /// Records a kill the caller made by its own means (after a number of acknowledgements).
    package mutating func recordKill() { kills += 1 }

    /// The figures in one line, starting `soak:` so `make soak` can collect them.
    package var figures: String {
        let elapsed = (ContinuousClock.now - started).components
        let seconds = max(1e-3, Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        let rate = Double(kills + completions) / seconds
        return "soak: \(operation): \(kills) kills (\(completions) runs ended first), \(acknowledged) acknowledged "
            + "\(unit), \(lost) lost, \(duplicated) duplicated, \(unopenable) unopenable, "
            + String(format: "%.2f rounds/s", rate)
    }

    /// The figures and what made stores unopenable, for a failed expectation.
    package var summary: String { ([figures] + failures.prefix(10)).joined(separator: "\n") }

    /// Whether nothing was lost, duplicated or left unopenable.
    package var isClean: Bool { lost == 0 && duplicated == 0 && unopenable == 0 }
}
