import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Records a fetched results controller's delegate calls and applies them to the results as
/// they were before each change.
final class FetchedResultsRecorder: FetchedResultsControllerDelegate {
    enum Event: Equatable {
        case willChange
        case section(FetchedResultsChangeType, index: Int, name: String)
        case object(FetchedResultsChangeType, ObjectIdentifier, at: IndexPath?, new: IndexPath?)
        case difference(CollectionDifference<ManagedObjectID>)
        case didChange
    }

    private(set) var events: [Event] = []
    /// The sections (names and objects) as the reported changes make them.
    private(set) var names: [String]
    private(set) var objects: [[ManagedObject]]
    /// Problems found applying the changes.
    private(set) var problems: [String] = []
    private var pending: [Event] = []
    private var idsBefore: [ManagedObjectID] = []
    private var objectsByIdentifier: [ObjectIdentifier: ManagedObject] = [:]

    init(_ controller: FetchedResultsController<Employee>) {
        names = (controller.sections ?? []).map(\.name)
        objects = (controller.sections ?? []).map { ($0.objects ?? []).map { $0 as! ManagedObject } }
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<FetchRequestResult>) {
        events.append(.willChange)
        pending = []
        idsBefore = objects.flatMap { $0.map(\.objectID) }
    }

    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {
        let event = Event.section(type, index: sectionIndex, name: sectionInfo.name)
        events.append(event)
        pending.append(event)
    }

    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        let object = anObject as! ManagedObject
        objectsByIdentifier[ObjectIdentifier(object)] = object
        let event = Event.object(type, ObjectIdentifier(object), at: indexPath, new: newIndexPath)
        events.append(event)
        pending.append(event)
    }

    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>,
        didChangeContentWith difference: CollectionDifference<ManagedObjectID>
    ) {
        events.append(.difference(difference))
        pending.append(.difference(difference))
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<FetchRequestResult>) {
        events.append(.didChange)
        apply(pending)
        // The controller handed to the delegate shows the results after the change.
        let shown = (controller.fetchedObjects ?? []).map { $0 as! ManagedObject }
        if !shown.elementsEqual(objects.joined(), by: ===) {
            problems.append("the delegate's controller shows other results")
        }
    }

    /// Applies one change's callbacks as a table view applies batch updates: removals at the
    /// old positions, then insertions at the new ones.
    private func apply(_ changes: [Event]) {
        var removals: [IndexPath] = []
        var insertions: [(IndexPath, ManagedObject)] = []
        var updates: [(IndexPath, ManagedObject)] = []
        var deletedSections: [Int] = []
        var insertedSections: [(Int, String)] = []
        var difference: CollectionDifference<ManagedObjectID>?
        for change in changes {
            switch change {
            case .section(.delete, let index, _): deletedSections.append(index)
            case .section(.insert, let index, let name): insertedSections.append((index, name))
            case .object(let type, let id, let old, let new):
                let object = objectsByIdentifier[id]!
                switch type {
                case .delete: removals.append(old!)
                case .insert: insertions.append((new!, object))
                case .move:
                    removals.append(old!)
                    insertions.append((new!, object))
                case .update: updates.append((new!, object))
                }
            case .difference(let reported): difference = reported
            default: problems.append("unexpected \(change)")
            }
        }
        for path in removals.sorted(by: >) { objects[path.section].remove(at: path.item) }
        for index in deletedSections.sorted(by: >) {
            if !objects[index].isEmpty { problems.append("section \(names[index]) deleted with objects in it") }
            objects.remove(at: index)
            names.remove(at: index)
        }
        for (index, name) in insertedSections.sorted(by: { $0.0 < $1.0 }) {
            objects.insert([], at: index)
            names.insert(name, at: index)
        }
        for (path, object) in insertions.sorted(by: { $0.0 < $1.0 }) {
            objects[path.section].insert(object, at: path.item)
        }
        for (path, object) in updates where objects[path.section][path.item] !== object {
            problems.append("update of \(object.objectID) reported at \(path), where another object is")
        }
        let idsAfter = objects.flatMap { $0.map(\.objectID) }
        if let difference, idsBefore.applying(difference) != idsAfter {
            problems.append("the difference does not turn the old IDs into the new ones")
        }
    }
}

/// A controller titling sections with their whole names, as a subclass of Core Data's may.
final class WholeNameTitledController: FetchedResultsController<Employee> {
    override func sectionIndexTitle(forSectionName sectionName: String) -> String? { "#" + sectionName }
}

/// `FetchedResultsController`: the sections and index paths of a fetch, and the changes it
/// reports as its context's objects change, compared with running the fetch again.
@Suite struct FetchedResultsControllerTests {
    /// Active employees in sections by their notes, ordered by notes then name.
    static func request() -> FetchRequest<Employee> {
        let request = FetchRequest<Employee>(entityName: "Employee")
        request.predicate = FetchPredicate(format: "active == YES")
        request.sortDescriptors = [FetchSortDescriptor(key: "notes"), FetchSortDescriptor(key: "name")]
        return request
    }

    @discardableResult
    static func employee(
        _ name: String, notes: String?, salary: Int64 = 10, active: Bool = true, in context: ManagedObjectContext
    ) -> Employee {
        let employee = Employee(context: context)
        employee.name = name
        employee.notes = notes
        employee.salary = salary
        employee.active = active
        return employee
    }

    /// A store on disk with six employees (one inactive), saved and reopened.
    static func seededStore(in folder: TemporaryDirectory) throws {
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            employee("ann", notes: "Beta", in: context)
            employee("bob", notes: "alpha", in: context)
            employee("cy", notes: "Beta", in: context)
            employee("dee", notes: nil, in: context)
            employee("eve", notes: "gamma", in: context)
            employee("fay", notes: "alpha", active: false, in: context)
            try context.save()
        }
        try container.close()
    }

    /// The active employees' names in each section, as running the fetch again gives them.
    static func refetchedSections(_ context: ManagedObjectContext) throws -> [String: [String]] {
        Dictionary(grouping: try context.fetch(request()), by: { $0.notes ?? "" }).mapValues { $0.map(\.name) }
    }

    @Test func sectionsIndexPathsAndTitlesOfAReopenedStore() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: context, sectionNameKeyPath: "notes", cacheName: nil
            )
            #expect(controller.fetchedObjects == nil)
            #expect(controller.sections == nil)
            try controller.performFetch()
            let sections = try #require(controller.sections)
            #expect(sections.map(\.name) == ["", "Beta", "alpha", "gamma"], "nil first, then by the string order")
            #expect(sections.map(\.numberOfObjects) == [1, 2, 1, 1])
            #expect(sections.map(\.indexTitle) == [nil, "B", "A", "G"])
            #expect(sections[1].objects?.map { ($0 as! Employee).name } == ["ann", "cy"])
            #expect(controller.fetchedObjects?.map(\.name) == ["dee", "ann", "cy", "bob", "eve"])
            #expect(controller.sectionIndexTitles == ["B", "A", "G"])
            #expect(controller.section(forSectionIndexTitle: "A", at: 1) == 2)
            let cy = controller.object(at: IndexPath(item: 1, section: 1))
            #expect(cy.name == "cy")
            #expect(controller.indexPath(forObject: cy) == IndexPath(row: 1, section: 1))
            for (position, object) in (controller.fetchedObjects ?? []).enumerated() {
                let path = try #require(controller.indexPath(forObject: object))
                #expect(controller.object(at: path) === object, "object \(position) round-trips through its index path")
            }
            let fay = try context.fetch(FetchRequest<Employee>(entityName: "Employee")).first { $0.name == "fay" }!
            #expect(controller.indexPath(forObject: fay) == nil, "an object the predicate rejects has no index path")
            #expect(controller.fetchRequest.sortDescriptors?.count == 2)
            #expect(controller.sectionNameKeyPath == "notes")

            let unsectioned = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: context, sectionNameKeyPath: nil,
                cacheName: "ignored")
            try unsectioned.performFetch()
            #expect(unsectioned.sections?.count == 1)
            #expect(unsectioned.sections?.first?.numberOfObjects == 5)
            #expect(unsectioned.cacheName == "ignored")
        }
        try container.close()
    }

    @Test func aSubclassTitlesTheSections() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let controller = WholeNameTitledController(
                fetchRequest: Self.request(), managedObjectContext: context, sectionNameKeyPath: "notes", cacheName: nil
            )
            try controller.performFetch()
            #expect(controller.sectionIndexTitles == ["#", "#Beta", "#alpha", "#gamma"])
            #expect(controller.section(forSectionIndexTitle: "#alpha", at: 2) == 2)
        }
        try container.close()
    }

    @Test func aRequestWithoutSortDescriptorsIsAnError() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        context.performAndWait {
            let request = FetchRequest<Employee>(entityName: "Employee")
            let controller = FetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            #expect { try controller.performFetch() } throws: { ($0 as? CoreDataError)?.code == .coreData }
            #expect(controller.fetchedObjects == nil, "nothing was fetched")
        }
    }

    @Test func sectionsOutOfSortOrderAreAnError() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        context.performAndWait {
            let request = Self.request()
            request.sortDescriptors = [FetchSortDescriptor(key: "name")]
            let controller = FetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "notes", cacheName: nil)
            // By name: ann (Beta), bob (alpha), cy (Beta): "Beta" comes back after "alpha".
            #expect { try controller.performFetch() } throws: { ($0 as? CoreDataError)?.code == .coreData }
        }
        try container.close()
    }

    @Test func delegateHearsSectionsThenObjectsThenTheDifference() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: context, sectionNameKeyPath: "notes", cacheName: nil
            )
            try controller.performFetch()
            let recorder = FetchedResultsRecorder(controller)
            controller.delegate = recorder
            let objects = controller.fetchedObjects ?? []
            let (dee, ann, cy, eve) = (objects[0], objects[1], objects[2], objects[4])
            context.delete(eve)  // empties section "gamma"
            let zed = Self.employee("zed", notes: "delta", in: context)  // a new section
            ann.name = "zz"  // moves within "Beta"
            dee.salary = 99  // in place
            cy.active = false  // leaves
            context.processPendingChanges()
            let kinds = recorder.events.map { event -> String in
                switch event {
                case .willChange: return "will"
                case .section(let type, let index, let name): return "section \(type) \(index) \(name)"
                case .object(let type, _, let old, let new):
                    return "\(type) \(old.map { "\($0)" } ?? "-") \(new.map { "\($0)" } ?? "-")"
                case .difference: return "difference"
                case .didChange: return "did"
                }
            }
            #expect(
                kinds == [
                    "will", "section delete 3 gamma", "section insert 3 delta",
                    "delete [1, 1] -", "delete [3, 0] -", "insert - [3, 0]", "move [1, 0] [1, 0]",
                    "update [0, 0] [0, 0]",
                    "difference", "did",
                ], "sections, then deletes, inserts, moves and updates, then the difference")
            #expect(recorder.problems.isEmpty, "\(recorder.problems)")
            #expect(recorder.names == ["", "Beta", "alpha", "delta"])
            #expect(recorder.objects.map { $0.map { ($0 as! Employee).name } } == [["dee"], ["zz"], ["bob"], ["zed"]])
            #expect(controller.indexPath(forObject: zed) == IndexPath(item: 0, section: 3))
            #expect(controller.fetchedObjects?.map(\.name) == ["dee", "zz", "bob", "zed"])
        }
        try container.close()
    }

    @Test func updatesOutsideTheSortKeysAreReportedInPlace() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: context, sectionNameKeyPath: "notes", cacheName: nil
            )
            try controller.performFetch()
            let recorder = FetchedResultsRecorder(controller)
            controller.delegate = recorder
            let before = controller.fetchedObjects ?? []
            for employee in before { employee.salary += 5 }
            // bob → "bz" keeps its place: it is alone in its section.
            before[3].name = "bz"
            try context.save()
            let objectEvents = recorder.events.compactMap { event -> FetchedResultsChangeType? in
                if case .object(let type, _, let old, let new) = event, old == new { return type }
                return nil
            }
            #expect(objectEvents == Array(repeating: .update, count: 5))
            #expect(controller.fetchedObjects?.elementsEqual(before, by: ===) == true)
            #expect(recorder.events.contains(.difference(CollectionDifference<ManagedObjectID>([])!)))
            #expect(recorder.problems.isEmpty, "\(recorder.problems)")
        }
        try container.close()
        // The saved values are on disk.
        let reopened = try GraphModel.container(at: folder.store())
        let context2 = reopened.newBackgroundContext()
        try context2.performAndWait {
            let salaries = try context2.fetch(Self.request()).map(\.salary)
            #expect(salaries == Array(repeating: 15, count: 5))
        }
        try reopened.close()
    }

    @Test func controllersOfAChildAndItsParentFollowTheChildsSave() throws {
        let folder = TemporaryDirectory()
        try Self.seededStore(in: folder)
        let container = try GraphModel.container(at: folder.store())
        let parent = container.newBackgroundContext()
        let child = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let parentController = try parent.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: parent, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            return controller
        }
        try child.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: child, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            let recorder = FetchedResultsRecorder(controller)
            controller.delegate = recorder
            Self.employee("abe", notes: "Beta", in: child)
            child.processPendingChanges()
            #expect(controller.fetchedObjects?.map(\.name) == ["dee", "abe", "ann", "cy", "bob", "eve"])
            #expect(recorder.problems.isEmpty, "\(recorder.problems)")
            try child.save()
        }
        parent.performAndWait {
            #expect(
                parentController.fetchedObjects?.map(\.name) == ["dee", "abe", "ann", "cy", "bob", "eve"],
                "the child's save reached the parent's controller")
        }
        try parent.performAndWait { try parent.save() }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let context = reopened.newBackgroundContext()
        let names = try context.performAndWait { try context.fetch(Self.request()).map(\.name) }
        #expect(names == ["dee", "abe", "ann", "cy", "bob", "eve"], "the saved insert is in the reopened store")
        try reopened.close()
    }

    /// A seeded random sequence of inserts, updates (of the sort key, the section key, the
    /// predicate's key and another attribute), deletes, saves and merges of another context's
    /// saves; after each step the controller must hold what running the fetch again gives, and
    /// the reported changes applied to the previous results must give the new ones.
    @Test(arguments: [1 as UInt64, 2, 3])
    func randomChangesMatchRunningTheFetchAgain(seed: UInt64) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let mine = container.newBackgroundContext()
        mine.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        let theirs = container.newBackgroundContext()
        theirs.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        var random = SplitMix64(seed: seed)
        let notes: [String?] = [nil, "Alpha", "Beta", "Gamma", "delta", "epsilon", "zeta", "Omega"]
        var serial = 0
        func nextName() -> String {
            serial += 1
            return "e\(serial)"
        }
        let (controller, recorder) = try mine.performAndWait {
            for _ in 0..<8 { Self.employee(nextName(), notes: notes.randomElement(using: &random)!, in: mine) }
            try mine.save()
            let controller = FetchedResultsController(
                fetchRequest: Self.request(), managedObjectContext: mine, sectionNameKeyPath: "notes", cacheName: nil)
            try controller.performFetch()
            let recorder = FetchedResultsRecorder(controller)
            controller.delegate = recorder
            return (controller, recorder)
        }
        let everyone = FetchRequest<Employee>(entityName: "Employee")
        everyone.sortDescriptors = [FetchSortDescriptor(key: "name")]
        let didSave = ContextLifecycleTests.Observer(ManagedObjectContext.didSaveObjectsNotification, of: theirs)
        for step in 0..<150 {
            let operation = Int.random(in: 0..<9, using: &random)
            if operation == 8 {
                // Another context saves; this one merges the save.
                try theirs.performAndWait {
                    let saved = try theirs.fetch(everyone)
                    Self.employee(nextName(), notes: notes.randomElement(using: &random)!, in: theirs)
                    if let changed = saved.randomElement(using: &random) {
                        changed.notes = notes.randomElement(using: &random)!
                        changed.salary += 1
                    }
                    if let renamed = saved.randomElement(using: &random) { renamed.name = nextName() }
                    if let gone = saved.randomElement(using: &random) { theirs.delete(gone) }
                    try theirs.save()
                }
                let notification = try #require(didSave.notifications.current.last)
                mine.performAndWait { mine.mergeChanges(fromContextDidSave: notification) }
            } else {
                try mine.performAndWait {
                    let all = try mine.fetch(everyone)
                    let target = all.randomElement(using: &random)
                    switch operation {
                    case 0, 1:
                        Self.employee(
                            nextName(), notes: notes.randomElement(using: &random)!,
                            active: Int.random(in: 0..<5, using: &random) > 0, in: mine)
                    case 2: target?.salary += 1
                    case 3: target?.name = nextName()
                    case 4: target?.notes = notes.randomElement(using: &random)!
                    case 5: target?.active.toggle()
                    case 6: if let target { mine.delete(target) }
                    default: try mine.save()
                    }
                }
            }
            try mine.performAndWait {
                let expected = try mine.fetch(Self.request())
                let actual = controller.fetchedObjects ?? []
                let same = actual.elementsEqual(expected, by: ===)
                #expect(same, "step \(step) (operation \(operation)): \(actual.map(\.name)) vs \(expected.map(\.name))")
                let sections = controller.sections ?? []
                var expectedNames: [String] = []
                for employee in expected where expectedNames.last != (employee.notes ?? "") {
                    expectedNames.append(employee.notes ?? "")
                }
                #expect(sections.map(\.name) == expectedNames, "step \(step)")
                let sectionContents = Dictionary(
                    uniqueKeysWithValues: sections.map { ($0.name, ($0.objects ?? []).map { ($0 as! Employee).name }) })
                let refetched = try Self.refetchedSections(mine)
                #expect(refetched == sectionContents, "step \(step)")
                #expect(recorder.names == sections.map(\.name), "step \(step): the reported section changes")
                let reported = recorder.objects.flatMap { $0 }.elementsEqual(actual, by: ===)
                #expect(reported, "step \(step): the reported object changes")
                #expect(recorder.problems.isEmpty, "step \(step): \(recorder.problems)")
                for (position, employee) in actual.enumerated() {
                    guard let path = controller.indexPath(forObject: employee) else {
                        Issue.record("step \(step): no index path for object \(position)")
                        continue
                    }
                    #expect(controller.object(at: path) === employee)
                }
            }
        }
        // The sequence exercised every kind of change.
        var kinds: Set<String> = []
        for event in recorder.events {
            switch event {
            case .section(let type, _, _): kinds.insert("section \(type)")
            case .object(let type, _, _, _): kinds.insert("\(type)")
            default: break
            }
        }
        #expect(kinds == ["section insert", "section delete", "insert", "delete", "move", "update"])
        try container.close()
    }
}
