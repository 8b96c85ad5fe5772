import Dispatch
import Testing
@testable import Strata

/// How contexts mark their queues so that `performAndWait` and `isOnQueue` can tell where they
/// run: nothing a context puts on a queue outlives it, so keys that other code (another
/// library, another context) makes later never read a value a gone context left.
@Suite struct ContextQueueMarkTests {
    /// Main-queue contexts share `DispatchQueue.main`, which outlives them: a key made after
    /// they are gone may sit at the address of a key one of them made, and must read nothing
    /// (GRDB's scheduling watchdog read such a value as its own object and crashed).
    @Test func goneMainQueueContextsLeaveNoValueOnTheMainQueue() {
        for _ in 0..<64 { _ = ManagedObjectContext(concurrencyType: .mainQueueConcurrencyType) }
        let keys = (0..<4096).map { _ in DispatchSpecificKey<Int>() }
        #expect(keys.allSatisfy { DispatchQueue.main.getSpecific(key: $0) == nil })
    }

    /// A context still tells its own queue from others' after the change.
    @Test func contextsKnowTheirOwnQueue() {
        let main = ManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        let first = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        let second = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        #expect(!first.isOnQueue && !second.isOnQueue)
        first.performAndWait {
            #expect(first.isOnQueue)
            #expect(!second.isOnQueue)
            #expect(!main.isOnQueue)
        }
        second.performAndWait { #expect(second.isOnQueue && !first.isOnQueue) }
    }
}
