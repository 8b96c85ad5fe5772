import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A process that has the store open read-only with the remote change option hears of another
/// process's save, and reads its history and its objects without reopening.
@Suite struct PersistentStoreRemoteChangeCrossProcessTests {
    @Test func readOnlyStoreSeesAnotherProcessSaveAndPostsTheRemoteChange() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        var container = try PersistentHistoryTests.container(at: url)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            try context.save()
        }
        try container.close()

        container = try PersistentHistoryTests.container(
            at: url,
            options: [
                PersistentHistoryTrackingKey: true, PersistentStoreRemoteChangeNotificationPostOptionKey: true,
                ReadOnlyPersistentStoreOption: true,
            ])
        let coordinator = container.persistentStoreCoordinator
        let before = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let tokens = Locked<[PersistentHistoryToken]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .PersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { note in
            if let token = note.userInfo?[PersistentHistoryTokenKey] as? PersistentHistoryToken {
                tokens.withLock { $0.append(token) }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let added = try CrossProcessTests.runProbe(url.path, "add", "Zed", "123456", "Research")
        #expect(added.status == 0, "\(added.errors)")
        // Bounded only so that a broken watcher fails the test instead of hanging it.
        let deadline = Date().addingTimeInterval(120)
        while tokens.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let token = try #require(tokens.withLock { $0.last }, "no remote change notification")
        #expect(token > before)

        let transactions = try PersistentHistoryTests.transactions(.fetchHistory(after: before), in: container)
        #expect(transactions.last?.token == token)
        #expect(transactions.last?.processID != String(ProcessInfo.processInfo.processIdentifier))
        #expect(transactions.last?.bundleID == "strata-graph-probe")
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let employees = try reader.fetch(Employee.fetchRequest())
            #expect(employees.map(\.name) == ["Zed"])
        }
    }
}
