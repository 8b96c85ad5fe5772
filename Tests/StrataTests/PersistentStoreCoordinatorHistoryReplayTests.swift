import Foundation
import StrataTestSupport
import Testing
import StrataStore
@testable import Strata

/// Replay through a coordinator: another store's history applied to a store that coordinators
/// of this process have open, which get the remote change notification with the history token
/// after each batch, as after another coordinator's save, and merge it into their contexts.
@Suite struct PersistentStoreCoordinatorHistoryReplayTests {
    static var options: [String: Any] {
        [PersistentHistoryTrackingKey: true, PersistentStoreRemoteChangeNotificationPostOptionKey: true]
    }

    @Test func coordinatorsOfTheDestinationAreNotifiedAndMergeTheReplay() throws {
        let folder = TemporaryDirectory()
        let source = try PersistentHistoryTests.container(at: folder.store("Source"))
        try PersistentHistoryTests.insert(["Ada", "Grace"], author: "importer", in: source)
        let sourceEngine = try #require(source.persistentStoreCoordinator.persistentStores.first?.engineStore)

        let replaying = try PersistentHistoryTests.container(at: folder.store("Replica"), options: Self.options)
        let watching = try PersistentHistoryTests.container(at: folder.store("Replica"), options: Self.options)
        let coordinator = watching.persistentStoreCoordinator
        let tokens = Locked<[PersistentHistoryToken]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .PersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { notification in
            if let token = notification.userInfo?[PersistentHistoryTokenKey] as? PersistentHistoryToken {
                tokens.withLock { $0.append(token) }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let replica = try #require(replaying.persistentStoreCoordinator.persistentStores.first)
        #expect(try replaying.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: replica) == 1)
        let first = try #require(tokens.current.last)
        #expect(first == coordinator.currentPersistentHistoryToken(fromStores: nil))

        // The watching coordinator's context merges the replayed history after its last token.
        let context = watching.viewContext
        let replayed = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: watching)
        #expect(replayed.map(\.author) == ["importer"])
        let ada = try context.performAndWait {
            for transaction in replayed { context.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            let employees = try context.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(Set(employees.map(\.name)) == ["Ada", "Grace"])
            return try #require(employees.first { $0.name == "Ada" })
        }

        // A later source save, replayed: only it is applied, and the registered object merges it.
        let background = source.newBackgroundContext()
        try background.performAndWait {
            let employee = try #require(
                try background.fetch(FetchRequest<Employee>(entityName: "Employee")).first { $0.name == "Ada" })
            employee.salary = 88_000
            try background.save()
        }
        #expect(try replaying.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: replica) == 1)
        let second = try #require(tokens.current.last)
        #expect(first < second)
        let update = try PersistentHistoryTests.transactions(.fetchHistory(after: first), in: watching)
        #expect(update.count == 1)
        context.performAndWait {
            for transaction in update { context.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            #expect(ada.salary == 88_000)
        }
        #expect(
            try replaying.persistentStoreCoordinator.replayHistory(from: sourceEngine, into: replica) == 0,
            "nothing is applied twice")
        try watching.close()
        try replaying.close()
        try source.close()
    }

    @Test func aTokenOfAnotherStoreIsRefused() throws {
        let folder = TemporaryDirectory()
        let source = try PersistentHistoryTests.container(at: folder.store("Source"))
        try PersistentHistoryTests.insert(["Ada"], in: source)
        let sourceEngine = try #require(source.persistentStoreCoordinator.persistentStores.first?.engineStore)
        let replica = try PersistentHistoryTests.container(at: folder.store("Replica"), options: Self.options)
        let coordinator = replica.persistentStoreCoordinator
        try PersistentHistoryTests.insert(["Local"], in: replica)
        let foreign = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.replayHistory(from: sourceEngine, into: coordinator.persistentStores[0], after: foreign)
        }
        #expect(error?.code == .persistentHistoryTokenExpired)
        #expect(
            try PersistentHistoryTests.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: replica)
                .count == 1, "nothing was replayed")
        try replica.close()
        try source.close()
    }
}
