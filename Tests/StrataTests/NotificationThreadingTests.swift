import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Notifications are posted to `NotificationCenter.default` as Foundation posts them: observers
/// run on the saving thread before `save()` returns, and an observer that waits for a save on
/// another thread does not deadlock it.
@Suite struct NotificationThreadingTests {
    /// The number of objects of `entityName` in the store, read by a new context.
    private func count(_ container: PersistentContainer, _ entityName: String = "Employee") throws -> Int {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest<Employee>(entityName: entityName)) }
    }

    /// Inserts an employee named `name` into `context` and saves it, on the context's queue.
    private func insertAndSave(_ name: String, in context: ManagedObjectContext) throws {
        try context.performAndWait {
            Employee(context: context).name = name
            try context.save()
        }
    }

    @Test func anObserverWaitingForASaveOnAnotherThreadDoesNotWaitForever() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let waited = Locked<DispatchTimeoutResult?>(nil)
        let secondError = LockedError()
        // The observer of the first save waits for a save on another thread, whose own
        // notifications are posted while the first save's did-save notification is being posted.
        let token = NotificationCenter.default.addObserver(
            forName: .ManagedObjectContextDidSave, object: first, queue: nil
        ) { _ in
            let done = DispatchSemaphore(value: 0)
            Thread {
                do { try insertAndSave("Grace", in: second) } catch { secondError.set(error) }
                done.signal()
            }.start()
            let result = done.wait(timeout: .now() + 60)
            waited.withLock { $0 = result }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try insertAndSave("Ada", in: first)
        #expect(waited.current == .success)
        #expect(secondError.get() == nil)
        #expect(try count(container) == 2)
    }

    @Test func anObserverSavingOnItsOwnThreadIsNotifiedOfThatSaveInside() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let events = Locked<[String]>([])
        let nested = NotificationCenter.default.addObserver(
            forName: .ManagedObjectContextDidSave, object: second, queue: nil
        ) { _ in
            events.withLock { $0.append("second saved") }
        }
        let outer = NotificationCenter.default.addObserver(
            forName: .ManagedObjectContextDidSave, object: first, queue: nil
        ) { _ in
            events.withLock { $0.append("first saved") }
            try? insertAndSave("Grace", in: second)
            events.withLock { $0.append("observer returned") }
        }
        defer {
            NotificationCenter.default.removeObserver(outer)
            NotificationCenter.default.removeObserver(nested)
        }
        try insertAndSave("Ada", in: first)
        #expect(events.current == ["first saved", "second saved", "observer returned"])
        #expect(try count(container) == 2)
    }

    @Test func concurrentSavesPostEachNotificationOnceOnTheSavingThread() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let writers = 8, saves = 25
        let contexts = (0..<writers).map { _ in container.newBackgroundContext() }
        let names: [Notification.Name] = [
            .ManagedObjectContextObjectsDidChange, .ManagedObjectContextWillSave, .ManagedObjectContextDidSave,
            ManagedObjectContext.didSaveObjectIDsNotification,
        ]
        // For each context and notification: how many were posted, and how many on another
        // thread than the one saving the context.
        let posted = Locked<[ObjectIdentifier: [Notification.Name: Int]]>([:])
        let elsewhere = Locked(0)
        let savers = Locked<[ObjectIdentifier: pthread_t]>([:])
        let tokens = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let context = note.object as? ManagedObjectContext, contexts.contains(where: { $0 === context })
                else { return }
                let id = ObjectIdentifier(context)
                posted.withLock { $0[id, default: [:]][name, default: 0] += 1 }
                if let saver = savers.withLock({ $0[id] }), pthread_equal(saver, pthread_self()) == 0 {
                    elsewhere.withLock { $0 += 1 }
                }
            }
        }
        defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
        let failures = LockedError()
        let group = DispatchGroup()
        for (writer, context) in contexts.enumerated() {
            group.enter()
            Thread {
                savers.withLock { $0[ObjectIdentifier(context)] = pthread_self() }
                do {
                    for save in 0..<saves { try insertAndSave("writer \(writer) save \(save)", in: context) }
                } catch { failures.set(error) }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 300) == .success)
        #expect(failures.get() == nil)
        for context in contexts {
            #expect(
                posted.current[ObjectIdentifier(context)] == Dictionary(uniqueKeysWithValues: names.map { ($0, saves) })
            )
        }
        #expect(elsewhere.current == 0)
        #expect(try count(container) == writers * saves)
    }
}
