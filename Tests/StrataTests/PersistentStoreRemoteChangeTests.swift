import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The remote change notification: posted after each save to the coordinators that have the
/// store with the option set, with the store's history token, identifier and URL.
@Suite struct PersistentStoreRemoteChangeTests {
    @Test func saveNotifiesWithTheHistoryTokenOfTheSave() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(
            at: folder.store(),
            options: [
                PersistentHistoryTrackingKey: true, PersistentStoreRemoteChangeNotificationPostOptionKey: true,
            ])
        let coordinator = container.persistentStoreCoordinator
        let received = Locked<[[AnyHashable: Any]]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .PersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { notification in
            let info = notification.userInfo ?? [:]
            received.withLock { $0.append(info) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        try PersistentHistoryTests.insert(["Ada"], in: container)
        try PersistentHistoryTests.insert(["Grace"], in: container)
        let infos = received.current
        #expect(infos.count == 2)
        let store = coordinator.persistentStores[0]
        let tokens = infos.compactMap { $0[PersistentHistoryTokenKey] as? PersistentHistoryToken }
        #expect(tokens.count == 2 && tokens[0] < tokens[1])
        #expect(tokens.last == coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(infos.allSatisfy { $0[StoreUUIDKey] as? String == store.identifier })
        #expect(infos.allSatisfy { $0["storeURL"] as? URL == store.url })
        #expect((infos.first?["storeURL"] as? URL)?.lastPathComponent == "Company.strata")

        let since = try PersistentHistoryTests.transactions(.fetchHistory(after: tokens[0]), in: container)
        #expect(since.map(\.token) == [tokens[1]], "the notified token fetches the history after it")
    }

    @Test func noNotificationWithoutTheOption() throws {
        let folder = TemporaryDirectory()
        let container = try PersistentHistoryTests.container(at: folder.store())
        let count = Locked(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .PersistentStoreRemoteChange, object: container.persistentStoreCoordinator, queue: nil
        ) { _ in count.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }
        try PersistentHistoryTests.insert(["Ada"], in: container)
        #expect(count.current == 0)
    }

    /// Two containers of one process on one store: a save through the one that did not set the
    /// option still reaches the one that did, and only it.
    @Test func aSaveReachesTheCoordinatorWithTheOptionFromOneWithout() throws {
        let folder = TemporaryDirectory()
        let listening = try PersistentHistoryTests.container(
            at: folder.store(),
            options: [
                PersistentHistoryTrackingKey: true, PersistentStoreRemoteChangeNotificationPostOptionKey: true,
            ])
        let saving = try PersistentHistoryTests.container(at: folder.store())
        let received = Locked<[ObjectIdentifier]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .PersistentStoreRemoteChange, object: nil, queue: nil
        ) { notification in
            guard let coordinator = notification.object as? PersistentStoreCoordinator,
                coordinator === listening.persistentStoreCoordinator
                    || coordinator === saving.persistentStoreCoordinator
            else { return }
            received.withLock { $0.append(ObjectIdentifier(coordinator)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        try PersistentHistoryTests.insert(["Ada"], in: saving)
        #expect(received.current == [ObjectIdentifier(listening.persistentStoreCoordinator)])
    }
}
