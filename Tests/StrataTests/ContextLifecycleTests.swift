import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// An object that records the lifecycle hooks the framework calls on it.
final class HookedObject: ManagedObject {
    @Managed var name: String?
    var calls: [String] = []
    override func awakeFromInsert() {
        super.awakeFromInsert()
        calls.append("awakeFromInsert")
    }
    override func awakeFromFetch() {
        super.awakeFromFetch()
        calls.append("awakeFromFetch")
    }
    override func awake(fromSnapshotEvents flags: SnapshotEventType) {
        super.awake(fromSnapshotEvents: flags)
        if flags.contains(.rollback) { calls.append("awake(rollback)") }
        if flags.contains(.refresh) { calls.append("awake(refresh)") }
    }
    override func willSave() {
        super.willSave()
        calls.append("willSave")
    }
    override func didSave() {
        super.didSave()
        calls.append("didSave")
    }
    override func prepareForDeletion() {
        super.prepareForDeletion()
        calls.append("prepareForDeletion")
    }
    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        calls.append("willTurnIntoFault")
    }
    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        calls.append("didTurnIntoFault")
    }
}

/// What a context does over its life: rollback, reset, refresh, notifications, merging,
/// lifecycle hooks, its queue, permanent IDs and optimistic locking.
@Suite struct ContextLifecycleTests {
    /// Saves Research (budget 100) with Ann and Bob, and Sales (budget 50); returns the IDs by name.
    static func seed(_ container: PersistentContainer) throws -> [String: ManagedObjectID] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            research.budget = 100
            let sales = Department(context: context)
            sales.name = "Sales"
            sales.budget = 50
            var objects: [String: ManagedObject] = ["Research": research, "Sales": sales]
            for name in ["Ann", "Bob"] {
                let employee = Employee(context: context)
                employee.name = name
                employee.salary = 1000
                employee.department = research
                objects[name] = employee
            }
            try context.save()
            return objects.mapValues(\.objectID)
        }
    }

    /// A container on a new store in `folder`, seeded by ``seed(_:)``, and the IDs by name.
    static func seededContainer(
        in folder: TemporaryDirectory
    ) throws -> (PersistentContainer, [String: ManagedObjectID]) {
        let container = try GraphModel.container(at: folder.store())
        return (container, try seed(container))
    }

    /// Observes `name` posted by `object`, collecting the object IDs of each `userInfo` key.
    final class Observer: @unchecked Sendable {
        let posts = Locked<[[String: Set<ManagedObjectID>]]>([])
        let notifications = Locked<[Notification]>([])
        private var token: (any NSObjectProtocol)?

        init(_ name: Notification.Name, of object: ManagedObjectContext) {
            let posts = self.posts
            let notifications = self.notifications
            token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { note in
                var entry: [String: Set<ManagedObjectID>] = [:]
                for (key, value) in note.userInfo ?? [:] {
                    guard let key = key as? String else { continue }
                    if let objects = value as? Set<ManagedObject> { entry[key] = Set(objects.map(\.objectID)) }
                    if let ids = value as? Set<ManagedObjectID> { entry[key] = ids }
                }
                posts.withLock { $0.append(entry) }
                notifications.withLock { $0.append(note) }
            }
        }

        deinit { if let token { NotificationCenter.default.removeObserver(token) } }
    }

    @Test func rollbackForgetsInsertsRevertsUpdatesAndRestoresDeletes() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = try #require(context.object(with: ids["Research"]!) as? Department)
            let sales = try #require(context.object(with: ids["Sales"]!) as? Department)
            let ann = try #require(context.object(with: ids["Ann"]!) as? Employee)
            let bob = try #require(context.object(with: ids["Bob"]!) as? Employee)
            let cy = Employee(context: context)
            cy.name = "Cy"
            cy.department = research
            research.name = "R&D"
            ann.department = sales
            context.delete(bob)
            context.processPendingChanges()
            #expect(research.employees == [cy])
            #expect(context.hasChanges)

            context.rollback()
            #expect(!context.hasChanges)
            #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)
            #expect(cy.managedObjectContext == nil, "the inserted object is forgotten")
            #expect(!cy.isInserted)
            #expect(!context.registeredObjects.contains(cy))
            #expect(research.name == "Research")
            #expect(!research.hasChanges)
            #expect(!bob.isDeleted, "the deleted object is back")
            #expect(bob.department === research)
            #expect(ann.department === research)
            #expect(research.employees == [ann, bob])
            #expect(sales.employees.isEmpty)
            let stored = try context.fetch(Employee.fetchRequest())
            #expect(Set(stored.map(\.name)) == ["Ann", "Bob"])
            try context.save()
        }
    }

    @Test func resetForgetsEverything() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = try #require(try context.existingObject(with: ids["Research"]!) as? Department)
            research.budget = 1
            let newcomer = Employee(context: context)
            newcomer.name = "New"
            context.reset()
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
            #expect(research.managedObjectContext == nil)
            #expect(newcomer.managedObjectContext == nil)
            let again = try #require(try context.fetch(Department.fetchRequest()).first { $0.name == "Research" })
            #expect(again !== research)
            #expect(again.budget == 100)
            #expect(try context.count(for: Employee.fetchRequest()) == 2)
        }
    }

    @Test func refreshWithoutMergingDiscardsChangesAndFaultsTheObject() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = try #require(try context.existingObject(with: ids["Research"]!) as? Department)
            research.name = "Changed"
            #expect(research.isUpdated)
            context.refresh(research, mergeChanges: false)
            #expect(research.isFault)
            #expect(!research.hasChanges)
            #expect(!context.hasChanges)
            #expect(context.updatedObjects.isEmpty)
            #expect(research.name == "Research")
            #expect(research.budget == 100)
            #expect(!research.isFault)
        }
    }

    /// `refresh(_:mergeChanges: true)` loads what another context saved and keeps this
    /// context's unsaved changes on top.
    @Test func refreshWithMergingKeepsUnsavedChangesOverStoredValues() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let research = try mine.performAndWait {
            let research = try #require(try mine.existingObject(with: ids["Research"]!) as? Department)
            research.name = "Mine"
            return research
        }
        try theirs.performAndWait {
            let research = try #require(try theirs.existingObject(with: ids["Research"]!) as? Department)
            research.name = "Theirs"
            research.budget = 999
            try theirs.save()
        }
        try mine.performAndWait {
            #expect(research.budget == 100, "realized objects are not updated behind the context's back")
            mine.refresh(research, mergeChanges: true)
            #expect(!research.isFault)
            #expect(research.name == "Mine", "the unsaved change stays")
            #expect(research.budget == 999, "the stored value comes in")
            #expect(research.isUpdated)
            try mine.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(try reader.existingObject(with: ids["Research"]!) as? Department)
            #expect(research.name == "Mine")
            #expect(research.budget == 999)
        }
    }

    @Test func refreshAllObjectsFaultsUnchangedObjectsAndKeepsChanges() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try Self.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let (research, sales) = try mine.performAndWait {
            let departments = try mine.fetch(Department.fetchRequest())
            let research = try #require(departments.first { $0.name == "Research" })
            let sales = try #require(departments.first { $0.name == "Sales" })
            sales.name = "Sales (mine)"
            return (research, sales)
        }
        try theirs.performAndWait {
            for department in try theirs.fetch(Department.fetchRequest()) { department.budget += 1 }
            try theirs.save()
        }
        mine.performAndWait {
            #expect(research.budget == 100)
            mine.refreshAllObjects()
            #expect(research.isFault, "an unchanged object becomes a fault")
            #expect(research.budget == 101)
            #expect(!sales.isFault)
            #expect(sales.name == "Sales (mine)")
            #expect(sales.budget == 51)
            #expect(mine.updatedObjects == [sales])
        }
    }

    /// Transient values survive a refresh that merges (and a merge of another context's save),
    /// and are dropped by one that does not.
    @Test func refreshKeepsTransientValuesOnlyWhenMerging() throws {
        let scratch = ModelBuilder.attribute("scratch", .string)
        scratch.isTransient = true
        let model = ModelBuilder.model([
            ModelBuilder.entity("Note", [ModelBuilder.attribute("text", .string), scratch])
        ])
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let observer = Observer(ManagedObjectContext.didSaveObjectsNotification, of: theirs)
        let note = try mine.performAndWait {
            mine.retainsRegisteredObjects = true
            let note = EntityDescription.insertNewObject(forEntityName: "Note", into: mine)
            note.setValue("v1", forKey: "text")
            try mine.save()
            note.setValue("cached", forKey: "scratch")
            #expect(note.hasChanges, "a transient change is a change")
            #expect(!note.hasPersistentChangedValues)
            try mine.save()
            #expect(!note.hasChanges)
            return note
        }
        func theirEdit(_ text: String) throws {
            try theirs.performAndWait {
                try theirs.existingObject(with: note.objectID).setValue(text, forKey: "text")
                try theirs.save()
            }
        }
        try theirEdit("v2")
        try mine.performAndWait { () throws -> Void in
            mine.refresh(note, mergeChanges: true)
            #expect(note.value(forKey: "text") as? String == "v2")
            #expect(note.value(forKey: "scratch") as? String == "cached", "merging keeps transient values")
        }
        try theirEdit("v3")
        let saved = try #require(observer.notifications.current.last)
        try mine.performAndWait { () throws -> Void in
            mine.mergeChanges(fromContextDidSave: saved)
            #expect(note.value(forKey: "text") as? String == "v3")
            #expect(note.value(forKey: "scratch") as? String == "cached", "merging a save keeps transient values")
            mine.refresh(note, mergeChanges: false)
            #expect(note.value(forKey: "scratch") == nil, "turning into a fault drops them")
        }
    }

    @Test(.waitsOnQueues) func mergeChangesFromTheChangesStream() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let stream = theirs.changes
        try mine.performAndWait {
            let research = try #require(try mine.existingObject(with: ids["Research"]!) as? Department)
            #expect(research.budget == 100)
            mine.retainsRegisteredObjects = true
        }
        try await theirs.perform {
            (try theirs.existingObject(with: ids["Research"]!) as! Department).budget = 321
            try theirs.save()
        }
        var saved: ContextChange?
        for await change in stream where change.kind == .didSave {
            saved = change
            break
        }
        let change = try #require(saved)
        #expect(change.updated == [ids["Research"]!])
        let budget = try await mine.perform {
            mine.mergeChanges(from: change)
            return (try mine.existingObject(with: ids["Research"]!) as! Department).budget
        }
        #expect(budget == 321)
    }

    /// Several contexts saving at once to one store: nothing is lost or duplicated.
    @Test(.waitsOnQueues) func concurrentContextsSaveIndependently() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    context.mergePolicy = .mergeByPropertyObjectTrump
                    for batch in 0..<5 {
                        try await context.perform {
                            let research = try context.existingObject(with: ids["Research"]!) as! Department
                            for index in 0..<10 {
                                let employee = Employee(context: context)
                                employee.name = "w\(worker)-b\(batch)-\(index)"
                                employee.department = research
                            }
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let reader = container.newBackgroundContext()
        let (count, names, members) = try await reader.perform {
            let employees = try reader.fetch(Employee.fetchRequest())
            let research = try reader.existingObject(with: ids["Research"]!) as! Department
            return (employees.count, Set(employees.map(\.name)).count, research.employees.count)
        }
        #expect(count == 2 + 4 * 5 * 10)
        #expect(names == count, "no object was saved twice")
        #expect(members == count)
    }

    @Test func processPendingChangesPostsTheObjectsDidChangeNotification() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        let observer = Observer(ManagedObjectContext.didChangeObjectsNotification, of: context)
        let newID = try context.performAndWait {
            let ann = try #require(try context.existingObject(with: ids["Ann"]!) as? Employee)
            let bob = try context.existingObject(with: ids["Bob"]!)
            let sales = try context.existingObject(with: ids["Sales"]!)
            observer.posts.withLock { $0.removeAll() }
            let cy = Employee(context: context)
            cy.name = "Cy"
            ann.salary = 2000
            context.delete(bob)
            _ = sales
            #expect(observer.posts.current.isEmpty, "nothing is posted before the event ends")
            context.processPendingChanges()
            return cy.objectID
        }
        let posts = observer.posts.current
        #expect(posts.count == 1)
        let post = try #require(posts.first)
        typealias Key = ManagedObjectContext.NotificationKey
        #expect(post[Key.insertedObjects.rawValue] == [newID])
        #expect(post[Key.updatedObjects.rawValue]?.contains(ids["Ann"]!) == true)
        #expect(
            post[Key.updatedObjects.rawValue]?.contains(ids["Research"]!) == true, "nullify changed Bob's department")
        #expect(post[Key.deletedObjects.rawValue] == [ids["Bob"]!])
        context.performAndWait { context.processPendingChanges() }
        #expect(observer.posts.current.count == 1, "an event without changes posts nothing")
        context.performAndWait {
            context.refresh(context.object(with: ids["Sales"]!), mergeChanges: false)
        }
        #expect(observer.posts.current.count == 2, "performAndWait ends the event")
        #expect(observer.posts.current.last?[Key.refreshedObjects.rawValue] == [ids["Sales"]!])
    }

    @Test(.waitsOnQueues) func saveNotificationsAndTheChangesStream() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        let willSave = Observer(ManagedObjectContext.willSaveObjectsNotification, of: context)
        let didSave = Observer(ManagedObjectContext.didSaveObjectsNotification, of: context)
        let stream = context.changes
        let newID = try context.performAndWait {
            let cy = Employee(context: context)
            cy.name = "Cy"
            let ann = try #require(try context.existingObject(with: ids["Ann"]!) as? Employee)
            ann.salary = 3000
            context.delete(try context.existingObject(with: ids["Bob"]!))
            #expect(willSave.posts.current.isEmpty)
            try context.save()
            #expect(willSave.posts.current.count == 1)
            #expect(didSave.posts.current.count == 1)
            return cy.objectID
        }
        #expect(!newID.isTemporaryID, "the did-save notification carries permanent IDs")
        typealias Key = ManagedObjectContext.NotificationKey
        let saved = try #require(didSave.posts.current.first)
        #expect(saved[Key.insertedObjectIDs.rawValue] == [newID])
        #expect(saved[Key.insertedObjects.rawValue] == [newID])
        #expect(saved[Key.updatedObjectIDs.rawValue] == [ids["Ann"]!, ids["Research"]!])
        #expect(saved[Key.deletedObjectIDs.rawValue] == [ids["Bob"]!])

        var kinds: [ContextChange.Kind] = []
        var didSaveChange: ContextChange?
        for await change in stream {
            kinds.append(change.kind)
            if change.kind == .didSave {
                didSaveChange = change
                break
            }
        }
        #expect(kinds.last == .didSave)
        #expect(kinds.contains(.willSave))
        #expect(kinds.firstIndex(of: .willSave)! < kinds.firstIndex(of: .didSave)!)
        #expect(kinds.first == .objectsDidChange, "the save ends the event first")
        #expect(didSaveChange?.inserted == [newID])
        #expect(didSaveChange?.updated == [ids["Ann"]!, ids["Research"]!])
        #expect(didSaveChange?.deleted == [ids["Bob"]!])
    }

    @Test func mergeChangesFromContextDidSaveBringsSavedChangesIn() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let observer = Observer(ManagedObjectContext.didSaveObjectsNotification, of: theirs)
        let (research, sales, ann, bob) = try mine.performAndWait {
            let research = try #require(try mine.existingObject(with: ids["Research"]!) as? Department)
            let sales = try #require(try mine.existingObject(with: ids["Sales"]!) as? Department)
            let ann = try #require(try mine.existingObject(with: ids["Ann"]!) as? Employee)
            let bob = try #require(try mine.existingObject(with: ids["Bob"]!) as? Employee)
            #expect(research.employees.count == 2)
            sales.name = "Sales (mine)"
            return (research, sales, ann, bob)
        }
        let newID = try theirs.performAndWait {
            let research = try #require(try theirs.existingObject(with: ids["Research"]!) as? Department)
            let sales = try #require(try theirs.existingObject(with: ids["Sales"]!) as? Department)
            research.budget = 5
            sales.budget = 7
            theirs.delete(try theirs.existingObject(with: ids["Bob"]!))
            let cy = Employee(context: theirs)
            cy.name = "Cy"
            cy.department = research
            try theirs.save()
            return cy.objectID
        }
        let notification = try #require(observer.notifications.current.first)
        try mine.performAndWait {
            mine.mergeChanges(fromContextDidSave: notification)
            #expect(research.budget == 5)
            #expect(sales.budget == 7)
            #expect(sales.name == "Sales (mine)", "unsaved changes stay")
            #expect(mine.registeredObject(for: ids["Bob"]!) === bob)
            #expect(
                bob.isDeleted && mine.deletedObjects == [bob], "the merged delete is a delete here, as in Core Data")
            #expect(Set(research.employees.map(\.objectID)) == [ann.objectID, newID])
            try mine.save()
            #expect(bob.managedObjectContext == nil, "the save let the deleted object go")
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let sales = try #require(try reader.existingObject(with: ids["Sales"]!) as? Department)
            #expect(sales.name == "Sales (mine)")
            #expect(sales.budget == 7)
        }
    }

    @Test func lifecycleHooksAreCalledWhenExpected() throws {
        let model = ModelBuilder.model([
            ModelBuilder.entity("Hooked", [ModelBuilder.attribute("name", .string)], className: "HookedObject")
        ])
        HookedObject.register(for: "Hooked")
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        let id = try context.performAndWait {
            let hooked = HookedObject(context: context)
            #expect(hooked.calls == ["awakeFromInsert"])
            hooked.name = "one"
            try context.save()
            #expect(hooked.calls == ["awakeFromInsert", "willSave", "didSave"])
            hooked.name = "two"
            try context.save()
            #expect(hooked.calls == ["awakeFromInsert", "willSave", "didSave", "willSave", "didSave"])
            try context.save()
            #expect(hooked.calls.count == 5, "a save without changes calls nothing")
            hooked.name = "three"
            context.rollback()
            #expect(hooked.calls.last == "awake(rollback)")
            #expect(hooked.calls.filter { $0 == "awakeFromInsert" }.count == 1, "awakeFromInsert is called once")
            context.refresh(hooked, mergeChanges: false)
            #expect(Array(hooked.calls.suffix(2)) == ["willTurnIntoFault", "didTurnIntoFault"])
            #expect(hooked.name == "two")
            #expect(hooked.calls.last == "awakeFromFetch", "firing the fault awakes it from fetch")
            return hooked.objectID
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            let fault = try #require(other.object(with: id) as? HookedObject)
            #expect(fault.calls.isEmpty)
            #expect(fault.name == "two")
            #expect(fault.calls == ["awakeFromFetch"])
            let fetched = try #require(try other.fetch(HookedObject.fetchRequest()).first)
            #expect(fetched === fault)
            #expect(fault.calls == ["awakeFromFetch"], "a fetch does not wake a realized object again")
            other.delete(fault)
            #expect(!fault.calls.contains("prepareForDeletion"))
            other.processPendingChanges()
            #expect(fault.calls.last == "prepareForDeletion")
            try other.save()
            #expect(fault.calls == ["awakeFromFetch", "prepareForDeletion", "willSave", "didSave"])
        }
        let third = container.newBackgroundContext()
        try third.performAndWait {
            let fetched = try third.fetch(HookedObject.fetchRequest())
            #expect(fetched.isEmpty)
            let fresh = HookedObject(context: third)
            #expect(fresh.calls == ["awakeFromInsert"])
            third.delete(fresh)
            third.insert(fresh)
            #expect(fresh.calls == ["awakeFromInsert"], "inserting again does not awake it again")
        }
    }

    @Test func eventChangesOfInsertedObjectsEndWithTheEvent() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.performAndWait {
            let employee = Employee(context: context)
            employee.name = "Ada"
            #expect(employee.changedValuesForCurrentEvent().keys.contains("name"))
            context.processPendingChanges()
            #expect(employee.changedValuesForCurrentEvent().isEmpty)
            employee.salary = 10
            #expect(Array(employee.changedValuesForCurrentEvent().keys) == ["salary"])
            #expect(employee.changedValues().keys.contains("name"), "the save's changes are kept")
        }
    }

    @Test(.waitsOnQueues) func performRunsOnTheQueueAndReturnsValues() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let context = container.newBackgroundContext()
        let observer = Observer(ManagedObjectContext.didChangeObjectsNotification, of: context)

        let count = try await context.perform { try context.count(for: Employee.fetchRequest()) }
        #expect(count == 2)
        let name = try await context.perform { () -> String in
            #expect(context.isOnQueue)
            return (try context.existingObject(with: ids["Ann"]!) as! Employee).name
        }
        #expect(name == "Ann")
        await #expect(throws: CoreDataError.self) {
            try await context.perform { _ = try context.existingObject(with: ids["Ann"]!).value(forCheckedKey: "nope") }
        }

        let ranOnQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            context.perform {
                let cy = Employee(context: context)
                cy.name = "Cy"
                continuation.resume(returning: context.isOnQueue)
            }
        }
        #expect(ranOnQueue)
        let inserted = await context.perform { context.insertedObjects.count }
        #expect(inserted == 1)
        #expect(
            observer.posts.current.contains {
                $0[ManagedObjectContext.NotificationKey.insertedObjects.rawValue]?.count == 1
            },
            "perform ends the event after the block")

        let nested = context.performAndWait {
            context.performAndWait { context.performAndWait { 40 } + 1 } + 1
        }
        #expect(nested == 42, "performAndWait is reentrant")
        let fromBackground = try await container.performBackgroundTask { background in
            try background.count(for: Department.fetchRequest())
        }
        #expect(fromBackground == 2)
    }

    /// The container's view context runs its blocks on the main queue.
    @Test(.waitsOnQueues) func viewContextRunsOnTheMainQueue() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let view = container.viewContext
        #expect(view.concurrencyType == .mainQueue)
        let (name, onQueue) = try await view.perform {
            ((try view.existingObject(with: ids["Ann"]!) as! Employee).name, view.isOnQueue)
        }
        #expect(name == "Ann")
        #expect(onQueue)
        let reentrant = await MainActor.run {
            view.performAndWait { view.performAndWait { view.isOnQueue } }
        }
        #expect(reentrant, "performAndWait on the main queue runs the block at once")
        // The main-thread mark is Foundation's answer, asked once a thread and then remembered.
        let onMain = await MainActor.run {
            [HeldContextQueues.isMainThread, HeldContextQueues.isMainThread, Thread.isMainThread]
        }
        #expect(Set(onMain).count == 1)
        let marks = Locked<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            marks.withLock {
                $0 = [HeldContextQueues.isMainThread, HeldContextQueues.isMainThread, Thread.isMainThread]
            }
            done.signal()
        }
        done.wait()
        #expect(marks.current == [false, false, false])
        let background = container.newBackgroundContext()
        #expect(!background.isOnQueue)
        #expect(background.performAndWait { background.isOnQueue && !view.isOnQueue })
    }

    @Test func obtainPermanentIDsBeforeSaving() throws {
        let folder = TemporaryDirectory()
        let savedID: ManagedObjectID
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            savedID = try context.performAndWait {
                let ops = Department(context: context)
                ops.name = "Ops"
                let dana = Employee(context: context)
                dana.name = "Dana"
                dana.department = ops
                let temporary = ops.objectID
                try context.obtainPermanentIDs(for: [ops])
                let permanent = ops.objectID
                #expect(!permanent.isTemporaryID)
                #expect(permanent != temporary)
                #expect(dana.objectID.isTemporaryID, "only the objects asked for")
                #expect(context.registeredObject(for: permanent) === ops)
                #expect(context.registeredObject(for: temporary) == nil)
                #expect(context.object(with: permanent) === ops)
                #expect(ops.isInserted, "still to be saved")
                #expect(dana.department === ops, "relationships follow the new ID")
                #expect(ops.employees == [dana])
                try context.obtainPermanentIDs(for: [ops])
                #expect(ops.objectID == permanent, "a permanent ID stays")
                try context.save()
                #expect(ops.objectID == permanent, "the save keeps the obtained ID")
                #expect(ops.objectID.uriRepresentation() == permanent.uriRepresentation())
                return permanent
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let id = try #require(
                container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: savedID.uriRepresentation()))
            let ops = try #require(try context.existingObject(with: id) as? Department)
            #expect(ops.name == "Ops")
            #expect(ops.employees.map(\.name) == ["Dana"])
        }
    }

    /// A save renames its objects' temporary IDs whether they are consecutive (kept in an
    /// array by identifier: ``TemporaryIDRenames``) or far apart (kept in a dictionary): here
    /// thousands of temporary IDs made between the objects' leave them far apart, and a
    /// department's employees made in a row are consecutive.
    @Test(arguments: [0, 5000]) func aSaveRenamesTemporaryIDsDenseOrFarApart(madeBetween: Int) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ops = Department(context: context)
            ops.name = "Ops"
            let entity = try #require(container.managedObjectModel.entitiesByName["Employee"])
            // Objects never inserted, each taking a temporary identifier.
            let unsaved = (0..<madeBetween).map { _ in Employee(entity: entity, insertInto: nil) }
            #expect(unsaved.count == madeBetween)
            for index in 0..<3 {
                let employee = Employee(context: context)
                employee.name = "e\(index)"
                employee.department = ops
            }
            try context.save()
            #expect(!ops.objectID.isTemporaryID)
            #expect(ops.employees.allSatisfy { !$0.objectID.isTemporaryID && $0.department === ops })
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let departments = try reader.fetch(FetchRequest<Department>(entityName: "Department"))
            #expect(departments.count == 1)
            #expect(Set(departments.first?.employees.map(\.name) ?? []) == ["e0", "e1", "e2"])
        }
        try reopened.close()
    }

    /// Two contexts change the same object; the second save conflicts.
    @Test func obtainPermanentIDsRefusesAnotherContextsObjects() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let mine = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        other.performAndWait {
            let ops = Department(context: other)
            ops.name = "Ops"
            let temporary = ops.objectID
            #expect(throws: CoreDataError.self) { try mine.performAndWait { try mine.obtainPermanentIDs(for: [ops]) } }
            #expect(ops.objectID == temporary, "nothing re-keyed")
            #expect(other.registeredObject(for: temporary) === ops)
            #expect(mine.performAndWait { mine.registeredObjects.isEmpty })
        }
    }

    @Test func faultOfATemporaryIDThrowsInsteadOfTrapping() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let mine = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        let temporary = other.performAndWait { () -> ManagedObjectID in
            let ops = Department(context: other)
            ops.name = "Ops"
            return ops.objectID
        }
        mine.performAndWait {
            let fault = mine.object(with: temporary)
            #expect(fault.isFault)
            #expect(throws: CoreDataError.self) { try fault.value(forCheckedKey: "name") }
            #expect(fault.isFault)
        }
    }

    @Test func objectsInsertedThenDeletedAreForgottenByRollbackAndSave() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ops = Department(context: context)
            ops.name = "Ops"
            context.delete(ops)
            context.processPendingChanges()
            context.rollback()
            #expect(!context.registeredObjects.contains(ops))
            #expect(ops.managedObjectContext == nil && !ops.isDeleted)

            let lab = Department(context: context)
            lab.name = "Lab"
            context.delete(lab)
            context.insert(lab)
            #expect(lab.isInserted && !lab.isDeleted, "inserted again")
            let temp = Department(context: context)
            temp.name = "Temp"
            context.delete(temp)
            try context.save()
            #expect(lab.managedObjectContext === context && !lab.objectID.isTemporaryID)
            #expect(!context.registeredObjects.contains(temp) && temp.managedObjectContext == nil)
        }
    }

    @Test func undeletingBeforeTheEventEndsAppliesNoDeleteRule() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ops = Department(context: context)
            ops.name = "Ops"
            let dana = Employee(context: context)
            dana.name = "Dana"
            dana.department = ops
            try context.save()
            context.delete(ops)
            context.insert(ops)
            context.processPendingChanges()
            #expect(!ops.isDeleted && !dana.isDeleted, "no cascade for an object no longer deleted")
            #expect(dana.department === ops)
        }
    }

    @Test func deletingWhatOthersDeletedSavesUnderMergePolicies() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let seed = container.newBackgroundContext()
        let id = try seed.performAndWait { () -> ManagedObjectID in
            let gone = Department(context: seed)
            gone.name = "Gone"
            try seed.save()
            return gone.objectID
        }
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let copy1 = try first.performAndWait { try first.existingObject(with: id) }
        let copy2 = try second.performAndWait { try second.existingObject(with: id) }
        try first.performAndWait {
            first.delete(copy1)
            try first.save()
        }
        try second.performAndWait {
            second.delete(copy2)
            let error = #expect(throws: CoreDataError.self) { try second.save() }
            #expect(error?.code == .managedObjectMerge)
            second.mergePolicy = .mergeByPropertyObjectTrump
            try second.save()
            #expect(!second.hasChanges)
            #expect(copy2.managedObjectContext == nil)
        }
    }

    @Test func countingAndFetchingPendingInsertsKeepToTheEntity() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ops = Department(context: context)
            ops.name = "Ops"
            let dana = Employee(context: context)
            dana.name = "Dana"
            let departments = try context.fetch(FetchRequest<ManagedObject>(entityName: "Department"))
            #expect(departments.count == 1 && departments.first === ops, "an inserted Employee is no Department")
            #expect(try context.count(for: Department.fetchRequest()) == 1)
            let counting = FetchRequest<Int>(entityName: "Employee")
            counting.resultType = .countResultType
            #expect(try context.fetch(counting) == [1])
        }
    }

    @Test func optimisticLockingFailsOrMergesByPolicy() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seededContainer(in: folder)
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let research1 = try first.performAndWait {
            try #require(try first.existingObject(with: ids["Research"]!) as? Department)
        }
        let research2 = try second.performAndWait {
            try #require(try second.existingObject(with: ids["Research"]!) as? Department)
        }

        try first.performAndWait {
            research1.budget = 200
            try first.save()
        }
        try second.performAndWait {
            #expect(second.mergePolicy == .error)
            research2.name = "Labs"
            let error = #expect(throws: CoreDataError.self) { try second.save() }
            #expect(error?.code == .managedObjectMerge)
            #expect(error?.detailedErrors.map(\.objectID) == [ids["Research"]!])
            #expect(second.hasChanges, "the failed save keeps the changes")
            #expect(research2.name == "Labs")

            second.mergePolicy = .mergeByPropertyObjectTrump
            try second.save()
            #expect(research2.name == "Labs")
            #expect(research2.budget == 200, "the property changed only in the store is merged in")
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(try reader.existingObject(with: ids["Research"]!) as? Department)
            #expect(research.name == "Labs")
            #expect(research.budget == 200)
        }

        // Both change the same property: the object wins with object trump, the store with
        // store trump.
        first.performAndWait {
            first.mergePolicy = .mergeByPropertyObjectTrump
            research1.name = "First"
        }
        try second.performAndWait {
            research2.name = "Second"
            research2.budget = 300
            try second.save()
        }
        try first.performAndWait {
            try first.save()
            #expect(research1.name == "First")
            #expect(research1.budget == 300)
        }
        try second.performAndWait {
            second.mergePolicy = .mergeByPropertyStoreTrump
            research2.name = "Second again"
            research2.budget = 400
            try second.save()
            #expect(research2.name == "First", "the store's change wins")
            #expect(research2.budget == 400, "the property changed only here is kept")
        }
        try reader.performAndWait {
            reader.refreshAllObjects()
            let research = try #require(try reader.existingObject(with: ids["Research"]!) as? Department)
            #expect(research.name == "First")
            #expect(research.budget == 400)
        }
    }

    /// Objects that outlive their context (inserted, fetched, registered faults) read `nil` for
    /// their context once it is deallocated, and are freed afterwards without touching it; a
    /// context deallocated after its objects is unaffected by them.
    @Test func objectsOutlivingTheirContextSeeNoContextAndFreeCleanly() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        let ids = try Self.seed(container)
        var kept: [ManagedObject] = []
        weak var gone: ManagedObjectContext?
        do {
            let context = container.newBackgroundContext()
            gone = context
            try context.performAndWait {
                let inserted = Department(context: context)
                inserted.name = "Unsaved"
                kept.append(inserted)
                kept.append(try context.existingObject(with: ids["Ann"]!))
                kept.append(context.object(with: ids["Sales"]!))
                kept.append(contentsOf: try context.fetch(FetchRequest<Employee>(entityName: "Employee")))
                #expect(kept.allSatisfy { $0.managedObjectContext === context })
            }
        }
        #expect(gone == nil, "the context is deallocated while its objects live")
        #expect(kept.allSatisfy { $0.managedObjectContext == nil })
        kept.removeAll()

        // The other order: the objects go first, then their context.
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for _ in 0..<3 { _ = try context.fetch(FetchRequest<Employee>(entityName: "Employee")) }
            #expect(
                !context.registeredObjects.isEmpty,
                "fetched objects stay until the event ends, as Core Data's autorelease pool keeps them")
        }
        try context.performAndWait {
            #expect(context.registeredObjects.isEmpty, "the objects were freed and left the context")
            let bob = try context.existingObject(with: ids["Bob"]!)
            #expect(bob.managedObjectContext === context)
        }
    }
}
