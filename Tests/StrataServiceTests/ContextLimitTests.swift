import Foundation
import StrataService
import Synchronization
import Testing

/// `ContextLimit`: no more requests at work at once than its limit, every waiting one runs, and a
/// request that throws frees its place.
@Suite struct ContextLimitTests {
    /// Forty tasks through a limit of three: never more than three inside at once, three at
    /// some moment (the limit does not serialize), and all forty ran.
    @Test func neverMoreThanTheLimitAtOnce() async throws {
        /// What the tasks count.
        final class Counts: Sendable {
            let inside = Atomic(0)
            let most = Atomic(0)
            let ran = Atomic(0)
        }
        let limit = ContextLimit(3)
        let counts = Counts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await limit.run {
                        let now = counts.inside.add(1, ordering: .acquiringAndReleasing).newValue
                        _ = counts.most.max(now, ordering: .acquiringAndReleasing)
                        try await Task.sleep(for: .milliseconds(5))
                        _ = counts.inside.subtract(1, ordering: .acquiringAndReleasing)
                        _ = counts.ran.add(1, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        let (ran, most, inside) = (
            counts.ran.load(ordering: .relaxed), counts.most.load(ordering: .relaxed),
            counts.inside.load(ordering: .relaxed)
        )
        #expect(ran == 40)
        #expect(most == 3)
        #expect(inside == 0)
    }

    /// With a limit of one, a request that throws frees its place for the next.
    @Test func aRequestThatThrowsFreesItsPlace() async throws {
        struct Failure: Error {}
        let limit = ContextLimit(1)
        await #expect(throws: Failure.self) {
            try await limit.run { () async throws -> Int in throw Failure() }
        }
        #expect(try await limit.run { 7 } == 7)
    }
}
