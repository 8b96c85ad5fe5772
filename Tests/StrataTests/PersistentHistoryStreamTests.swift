import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The live tail of the history: woken by commits, every transaction exactly once and in order
/// under concurrent saves, a small buffer that re-reads the log, and cancellation.
@Suite struct PersistentHistoryStreamTests {
    typealias History = PersistentHistoryTests

    @Test func liveTailDeliversEveryTransactionOnceInOrderUnderConcurrentSaves() async throws {
        let folder = TemporaryDirectory()
        let container = try History.container(at: folder.store())
        try History.insert(["before"], in: container)
        let start = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let stream = container.persistentStoreCoordinator.historyTransactions(after: start, bufferLimit: 2)
        let writers = 4
        let savesPerWriter = 10
        let expected = writers * savesPerWriter

        let reader = Task {
            var numbers: [Int64] = []
            var names: [String] = []
            for try await transaction in stream {
                numbers.append(transaction.transactionNumber)
                names += (transaction.changes ?? []).map { "\($0.changeType)" }
                if numbers.count == expected { break }
            }
            return (numbers, names)
        }
        await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for save in 0..<savesPerWriter { try History.insert(["w\(writer)-\(save)"], in: container) }
                }
            }
        }
        let (numbers, names) = try await reader.value
        #expect(numbers == Array((Int64(start.sequence) + 1)...(Int64(start.sequence) + Int64(expected))))
        #expect(names.count == expected && names.allSatisfy { $0 == "\(PersistentHistoryChangeType.insert)" })
    }

    @Test func tailStartsWithTheRetainedHistoryAndEndsWhenCancelled() async throws {
        let folder = TemporaryDirectory()
        let container = try History.container(at: folder.store())
        try History.insert(["Ada"], in: container)
        try History.insert(["Grace"], in: container)
        let origin = PersistentHistoryToken(
            storeIdentifier: container.persistentStoreCoordinator.persistentStores[0].identifier, sequence: 0)
        let seen = Locked<[Int64]>([])
        let reader = Task {
            for try await transaction in container.persistentStoreCoordinator.historyTransactions(after: origin) {
                seen.withLock { $0.append(transaction.transactionNumber) }
            }
            return true
        }
        while seen.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        reader.cancel()
        #expect(try await reader.value, "a cancelled tail ends without an error")
        #expect(seen.withLock { $0 } == [1, 2])
    }
}
