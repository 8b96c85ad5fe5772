import Foundation
import Logging

private let logger = Logger(label: "strata.fetchedresults")

/// What a fetched results controller's request gave: its objects and what decides membership
/// and order.
struct FetchedResultsQuery {
    var objects: [ManagedObject]
    var entity: EntityDescription
    var includesSubentities: Bool
    var predicate: FetchPredicate?
    var descriptors: [FetchSortDescriptor]
}

/// A weak reference to a tracker, for the context's notification observer.
private final class WeakTracker: @unchecked Sendable {
    weak var tracker: FetchedResultsTracker?
    init(_ tracker: FetchedResultsTracker) { self.tracker = tracker }
}

/// The results of a fetched results controller and their upkeep, shared by the controller and
/// the type-erased views of it handed to its delegate. Used on its context's queue.
final class FetchedResultsTracker {
    let context: ManagedObjectContext
    let sectionNameKeyPath: String?
    let cacheName: String?
    /// The controller's request (a `FetchRequest` of the controller's result type).
    let request: AnyObject
    /// Runs the request.
    private let run: () throws -> FetchedResultsQuery
    weak var delegate: (any FetchedResultsControllerDelegate)?
    /// The controller that owns the tracker, for the section index titles and the delegate.
    weak var owner: AnyObject?
    /// The section index title of a section name.
    var indexTitle: (String) -> String? = { _ in nil }

    /// The sections, in order; `nil` before the first fetch.
    private(set) var sections: [FetchedResultsSection]?
    private var sectionsByName: [String: FetchedResultsSection] = [:]
    /// The key each object in the results was placed by.
    private var tracked: [ObjectIdentifier: FetchedResultsKey] = [:]
    private var order = FetchedResultsOrder(descriptors: [], sectionNameKeyPath: nil)
    private var entity: EntityDescription?
    private var includesSubentities = true
    private var predicate: FetchPredicate?
    private var nextSequence = 0
    private var observer: (any NSObjectProtocol)?
    /// Counts the changes of the results, so that views of them can be cached.
    private(set) var version = 0
    private var flatCache: [ManagedObject]?

    init(
        context: ManagedObjectContext, sectionNameKeyPath: String?, cacheName: String?, request: AnyObject,
        run: @escaping () throws -> FetchedResultsQuery
    ) {
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.request = request
        self.run = run
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// Every object of the results, in order across sections.
    var fetchedObjects: [ManagedObject]? {
        guard let sections else { return nil }
        if let flatCache { return flatCache }
        let flat = sections.flatMap(\.members)
        flatCache = flat
        return flat
    }

    // MARK: Fetching

    /// Runs the request and replaces the results, then follows the context's changes.
    ///
    /// - Throws: ``CoreDataError`` when the request has no sort descriptors, does not fetch
    ///   managed objects, fails, or its sort does not keep each section's objects together.
    func performFetch() throws {
        let query = try run()
        let order = FetchedResultsOrder(descriptors: query.descriptors, sectionNameKeyPath: sectionNameKeyPath)
        var keyed = query.objects.enumerated().map {
            (object: $0.element, key: order.key(of: $0.element, sequence: $0.offset))
        }
        keyed.sort { order.precedes($0.key, $1.key) }
        var sections: [FetchedResultsSection] = []
        var byName: [String: FetchedResultsSection] = [:]
        var tracked: [ObjectIdentifier: FetchedResultsKey] = [:]
        for (position, entry) in keyed.enumerated() {
            if sections.last?.name != entry.key.section {
                guard byName[entry.key.section] == nil else {
                    throw CoreDataError(
                        .coreData,
                        "the fetched object at index \(position) has an out of order section name '\(entry.key.section)': objects must be sorted by section name"
                    )
                }
                let section = makeSection(entry.key.section)
                sections.append(section)
                byName[entry.key.section] = section
            }
            sections[sections.count - 1].members.append(entry.object)
            sections[sections.count - 1].keys.append(entry.key)
            tracked[ObjectIdentifier(entry.object)] = entry.key
        }
        if sectionNameKeyPath == nil, sections.isEmpty {
            let section = makeSection("")
            sections.append(section)
            byName[""] = section
        }
        self.order = order
        self.sections = sections
        self.sectionsByName = byName
        self.tracked = tracked
        self.entity = query.entity
        self.includesSubentities = query.includesSubentities
        self.predicate = query.predicate
        self.nextSequence = keyed.count
        changed()
        observeContext()
        logger.debug("Fetched \(keyed.count) objects of \(query.entity.entityName) in \(sections.count) sections")
    }

    private func makeSection(_ name: String) -> FetchedResultsSection {
        FetchedResultsSection(name: name) { [weak self] name in self?.indexTitle(name) }
    }

    private func changed() {
        version += 1
        flatCache = nil
    }

    private func observeContext() {
        guard observer == nil else { return }
        let box = WeakTracker(self)
        observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
        ) { notification in
            // Posted on the context's queue, where the tracker is used.
            box.tracker?.contextDidChange(notification.userInfo ?? [:])
        }
    }

    // MARK: Looking up

    /// The index path of `object`, or `nil` when it is not in the results.
    func indexPath(of object: ManagedObject) -> IndexPath? {
        guard let key = tracked[ObjectIdentifier(object)], let section = sectionsByName[key.section],
            let item = section.position(of: object, placedBy: key, by: order)
        else { return nil }
        return IndexPath(item: item, section: index(of: section))
    }

    /// The index of `section` (which is not empty, or the only section) among the sections.
    private func index(of section: FetchedResultsSection) -> Int {
        guard let sections else { return 0 }
        guard let first = section.keys.first else { return sections.firstIndex { $0 === section } ?? 0 }
        // The last section whose first key does not come after the section's.
        var low = 0
        var high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if let key = sections[middle].keys.first, order.precedes(first, key) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        if low > 0, sections[low - 1] === section { return low - 1 }
        // The sort does not keep sections in order of their first keys (a section key the
        // sort does not follow): look the section up.
        return sections.firstIndex { $0 === section } ?? 0
    }

    /// Whether `object` belongs in the results.
    private func belongs(_ object: ManagedObject) -> Bool {
        guard object.managedObjectContext === context, !object.isDeleted, let entity else { return false }
        guard includesSubentities ? object.entity.isKindOf(entity: entity) : object.entity === entity else {
            return false
        }
        return predicate?.evaluate(with: object) ?? true
    }

    // MARK: Following changes

    /// One object's change of the results.
    private struct Change {
        var object: ManagedObject
        var old: FetchedResultsKey?
        var new: FetchedResultsKey?
        var oldPath: IndexPath?
        var newPath: IndexPath?
    }

    /// Applies the context's objects-did-change `info` to the results and reports it.
    private func contextDidChange(_ info: [AnyHashable: Any]) {
        guard sections != nil else { return }
        func objects(_ key: ManagedObjectContext.NotificationKey) -> Set<ManagedObject> {
            info[key.rawValue] as? Set<ManagedObject> ?? []
        }
        let gone = objects(.deletedObjects).union(objects(.invalidatedObjects))
        var removals: [Change] = []
        var moves: [Change] = []
        var updates: [Change] = []
        var insertions: [Change] = []
        for object in gone {
            if let old = tracked[ObjectIdentifier(object)] { removals.append(Change(object: object, old: old)) }
        }
        for object in objects(.insertedObjects).union(objects(.updatedObjects)).union(objects(.refreshedObjects))
            .subtracting(gone)
        {
            let old = tracked[ObjectIdentifier(object)]
            guard belongs(object) else {
                if let old { removals.append(Change(object: object, old: old)) }
                continue
            }
            guard let old else {
                insertions.append(Change(object: object, new: order.key(of: object, sequence: nextSequence)))
                nextSequence += 1
                continue
            }
            let new = order.key(of: object, sequence: old.sequence)
            let change = Change(object: object, old: old, new: new)
            if new.section == old.section, order.compareValues(new, old) == .orderedSame {
                updates.append(change)
            } else {
                moves.append(change)
            }
        }
        guard !(removals.isEmpty && moves.isEmpty && updates.isEmpty && insertions.isEmpty) else { return }
        // A changed sort key that still falls between unchanged neighbours moves nothing.
        let moving = Set((removals + moves).map { ObjectIdentifier($0.object) })
        moves.removeAll { change in
            guard staysInPlace(change, moving: moving) else { return false }
            updates.append(change)
            return true
        }
        report(removals: removals, moves: moves, updates: updates, insertions: insertions)
    }

    /// Whether the moved `change` stays between its neighbours, none of which moves.
    private func staysInPlace(_ change: Change, moving: Set<ObjectIdentifier>) -> Bool {
        guard let old = change.old, let new = change.new, new.section == old.section,
            let section = sectionsByName[old.section],
            let position = section.position(of: change.object, placedBy: old, by: order)
        else { return false }
        if position > 0 {
            guard !moving.contains(ObjectIdentifier(section.members[position - 1])),
                order.precedes(section.keys[position - 1], new)
            else { return false }
        }
        if position + 1 < section.keys.count {
            guard !moving.contains(ObjectIdentifier(section.members[position + 1])),
                order.precedes(new, section.keys[position + 1])
            else { return false }
        }
        return true
    }

    /// Applies the changes to the results and reports them to the delegate.
    private func report(removals: [Change], moves: [Change], updates: [Change], insertions: [Change]) {
        var removals = removals
        var moves = moves
        var updates = updates
        var insertions = insertions
        let oldStarts = sectionStarts()
        // Positions before the change.
        for index in removals.indices { removals[index].oldPath = indexPath(of: removals[index].object) }
        for index in moves.indices { moves[index].oldPath = indexPath(of: moves[index].object) }
        for index in updates.indices { updates[index].oldPath = indexPath(of: updates[index].object) }
        var emptied: [(section: FetchedResultsSection, index: Int)] = []
        for change in updates {
            guard let old = change.old, let new = change.new, let section = sectionsByName[old.section],
                let position = section.position(of: change.object, placedBy: old, by: order)
            else { continue }
            section.keys[position] = new
            tracked[ObjectIdentifier(change.object)] = new
        }
        for change in removals + moves {
            guard let old = change.old, let section = sectionsByName[old.section],
                let position = section.position(of: change.object, placedBy: old, by: order)
            else { continue }
            if section.members.count == 1, sectionNameKeyPath != nil, let path = change.oldPath {
                emptied.append((section, path.section))
            }
            section.members.remove(at: position)
            section.keys.remove(at: position)
            tracked[ObjectIdentifier(change.object)] = nil
        }
        if !emptied.isEmpty {
            sections?.removeAll { $0.members.isEmpty }
            for entry in emptied { sectionsByName[entry.section.name] = nil }
        }
        var created: [FetchedResultsSection] = []
        for change in moves + insertions {
            guard let new = change.new else { continue }
            let section = sectionsByName[new.section] ?? insertSection(named: new.section, at: new, into: &created)
            let position = section.position(of: new, by: order)
            section.members.insert(change.object, at: position)
            section.keys.insert(new, at: position)
            tracked[ObjectIdentifier(change.object)] = new
        }
        changed()
        // Positions after the change.
        for index in moves.indices { moves[index].newPath = indexPath(of: moves[index].object) }
        for index in updates.indices { updates[index].newPath = indexPath(of: updates[index].object) }
        for index in insertions.indices { insertions[index].newPath = indexPath(of: insertions[index].object) }
        let recreated = Set(created.map(\.name)).intersection(emptied.map(\.section.name))
        let deletedSections = emptied.filter { !recreated.contains($0.section.name) }.sorted { $0.index < $1.index }
        let insertedSections = created.filter { !recreated.contains($0.name) }.map { ($0, index(of: $0)) }.sorted {
            $0.1 < $1.1
        }
        logger.debug(
            "\(context.name ?? "context") changed the fetched results: \(insertions.count) inserted, \(removals.count) deleted, \(moves.count) moved, \(updates.count) updated"
        )
        guard let delegate else { return }
        removals.sort { ($0.oldPath ?? []) < ($1.oldPath ?? []) }
        insertions.sort { ($0.newPath ?? []) < ($1.newPath ?? []) }
        moves.sort { ($0.newPath ?? []) < ($1.newPath ?? []) }
        updates.sort { ($0.oldPath ?? []) < ($1.oldPath ?? []) }
        let controller = view()
        delegate.controllerWillChangeContent(controller)
        for (section, index) in deletedSections {
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .delete)
        }
        for (section, index) in insertedSections {
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .insert)
        }
        for change in removals {
            delegate.controller(
                controller, didChange: change.object, at: change.oldPath, for: .delete, newIndexPath: nil)
        }
        for change in insertions {
            delegate.controller(
                controller, didChange: change.object, at: nil, for: .insert, newIndexPath: change.newPath)
        }
        for change in moves {
            delegate.controller(
                controller, didChange: change.object, at: change.oldPath, for: .move, newIndexPath: change.newPath)
        }
        for change in updates {
            delegate.controller(
                controller, didChange: change.object, at: change.oldPath, for: .update, newIndexPath: change.newPath)
        }
        if let difference = difference(removals: removals, moves: moves, insertions: insertions, oldStarts: oldStarts) {
            delegate.controller(controller, didChangeContentWith: difference)
        }
        delegate.controllerDidChangeContent(controller)
    }

    /// Creates the section `name` for an object of key `key`, in its place among the sections.
    private func insertSection(
        named name: String, at key: FetchedResultsKey, into created: inout [FetchedResultsSection]
    ) -> FetchedResultsSection {
        let section = makeSection(name)
        var low = 0
        var high = sections?.count ?? 0
        while low < high {
            let middle = (low + high) / 2
            if let first = sections?[middle].keys.first, order.precedes(first, key) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        sections?.insert(section, at: low)
        sectionsByName[name] = section
        created.append(section)
        return section
    }

    /// The position of each section's first object among all the objects.
    private func sectionStarts() -> [Int] {
        var starts: [Int] = []
        var total = 0
        for section in sections ?? [] {
            starts.append(total)
            total += section.members.count
        }
        return starts
    }

    /// The change as a difference of the object IDs in order.
    private func difference(
        removals: [Change], moves: [Change], insertions: [Change], oldStarts: [Int]
    ) -> CollectionDifference<ManagedObjectID>? {
        let newStarts = sectionStarts()
        func offset(_ path: IndexPath?, _ starts: [Int]) -> Int? { path.map { starts[$0.section] + $0.item } }
        var changes: [CollectionDifference<ManagedObjectID>.Change] = []
        for change in removals {
            if let old = offset(change.oldPath, oldStarts) {
                changes.append(.remove(offset: old, element: change.object.objectID, associatedWith: nil))
            }
        }
        for change in insertions {
            if let new = offset(change.newPath, newStarts) {
                changes.append(.insert(offset: new, element: change.object.objectID, associatedWith: nil))
            }
        }
        for change in moves {
            guard let old = offset(change.oldPath, oldStarts), let new = offset(change.newPath, newStarts) else {
                continue
            }
            changes.append(.remove(offset: old, element: change.object.objectID, associatedWith: new))
            changes.append(.insert(offset: new, element: change.object.objectID, associatedWith: old))
        }
        return CollectionDifference(changes)
    }

    /// The controller handed to the delegate: the owner when its result type is erased
    /// already, else a view of the same results.
    func view() -> FetchedResultsController<FetchRequestResult> {
        if let owner = owner as? FetchedResultsController<FetchRequestResult> { return owner }
        return FetchedResultsController<FetchRequestResult>(tracker: self)
    }
}
