import Foundation

/// Keeps the results of a fetch request in sections and reports their changes as its context's
/// objects change (Core Data's `NSFetchedResultsController`).
///
/// Create it with a request that has sort descriptors, call ``performFetch()``, then read
/// ``sections``, ``object(at:)`` and ``indexPath(forObject:)``. From then on the controller
/// follows its context's objects-did-change notification (posted by each
/// `processPendingChanges()`, hence by each save and each merge): it places inserted objects,
/// removes deleted ones and moves those whose sort or section key changed, each by binary
/// search, and reports the changes to its ``delegate``. An update that changes no sort key,
/// section key or predicate outcome moves nothing and is reported as `.update` in place.
///
/// Use it on its context's queue; not `Sendable`. The first sort descriptor should order the
/// objects by the section key path, so that each section's objects are together.
open class FetchedResultsController<ResultType> {
    let tracker: FetchedResultsTracker
    private var typedCache: (version: Int, objects: [ResultType])?

    /// A controller over `tracker`'s results.
    init(tracker: FetchedResultsTracker) {
        self.tracker = tracker
    }

    /// Creates a controller of `fetchRequest`'s results in `context` (Core Data's
    /// `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`).
    ///
    /// - Parameters:
    ///   - fetchRequest: the request; it needs sort descriptors and managed-object results.
    ///   - context: the context to fetch in and follow.
    ///   - sectionNameKeyPath: the key path naming each object's section, or `nil` for one
    ///     section.
    ///   - name: a cache name, kept for source compatibility (Strata keeps no cache).
    public init(
        fetchRequest: FetchRequest<ResultType>, managedObjectContext context: ManagedObjectContext,
        sectionNameKeyPath: String?,
        cacheName name: String?
    ) where ResultType: FetchRequestResult {
        let tracker = FetchedResultsTracker(
            context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name, request: fetchRequest
        ) { try Self.query(fetchRequest, in: context) }
        self.tracker = tracker
        tracker.owner = self
        tracker.indexTitle = { [weak self, unowned tracker] name in
            guard let self else { return nil }
            return self.delegate?.controller(tracker.view(), sectionIndexTitleForSectionName: name)
                ?? self.sectionIndexTitle(forSectionName: name)
        }
    }

    /// The context the request runs in and whose changes the controller follows.
    public var managedObjectContext: ManagedObjectContext { tracker.context }

    /// The key path whose value names each object's section; `nil` puts every object in one
    /// section.
    public var sectionNameKeyPath: String? { tracker.sectionNameKeyPath }

    /// The name given at creation. Strata keeps no section cache on disk: the name is kept
    /// for source compatibility only.
    public var cacheName: String? { tracker.cacheName }

    /// Deletes the cached section information of the controllers named `name` (all of them
    /// for `nil`), as Core Data's `deleteCache(withName:)`. Strata computes sections in memory
    /// and caches nothing on disk, so there is never anything to delete.
    ///
    /// - Parameter name: a cache name, or `nil`.
    open class func deleteCache(withName name: String?) {}

    /// The object told of changes of the results, held weakly.
    public var delegate: (any FetchedResultsControllerDelegate)? {
        get { tracker.delegate }
        set { tracker.delegate = newValue }
    }

    /// The results in order across sections; `nil` before ``performFetch()``.
    public var fetchedObjects: [ResultType]? {
        guard let objects = tracker.fetchedObjects else { return nil }
        if let typedCache, typedCache.version == tracker.version { return typedCache.objects }
        let typed = objects.map { $0 as! ResultType }
        typedCache = (tracker.version, typed)
        return typed
    }

    /// The sections of the results in order; `nil` before ``performFetch()``. Without a
    /// section key path there is one section, possibly empty.
    public var sections: [FetchedResultsSectionInfo]? { tracker.sections }

    /// Runs the request and replaces the results; from then on they follow the context's
    /// changes. Call it on the context's queue, and again after changing the request.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the request has no sort descriptors, does
    ///   not fetch managed objects, or sorts so that a section's objects are not together;
    ///   the fetch's error when it fails. The results stay as they were then.
    open func performFetch() throws {
        try tracker.performFetch()
    }

    /// The object at `indexPath`.
    ///
    /// - Parameter indexPath: a section and an item within it; it must be in range.
    /// - Returns: the object.
    public func object(at indexPath: IndexPath) -> ResultType {
        guard let sections = tracker.sections, sections.indices.contains(indexPath.section),
            sections[indexPath.section].members.indices.contains(indexPath.item)
        else { preconditionFailure("index path \(indexPath) is outside the fetched results") }
        return sections[indexPath.section].members[indexPath.item] as! ResultType
    }

    /// The index path of `object` in the results.
    ///
    /// - Parameter object: a managed object.
    /// - Returns: its position, or `nil` when it is not in the results.
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let object = object as? ManagedObject else { return nil }
        return tracker.indexPath(of: object)
    }

    /// The section index title of a section name: by default the name's first letter,
    /// capitalized (`nil` for an empty name). Override it to title sections otherwise; a
    /// delegate's `controller(_:sectionIndexTitleForSectionName:)` takes precedence.
    ///
    /// - Parameter sectionName: the section's name.
    /// - Returns: the title.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The distinct index titles of the sections, in order.
    open var sectionIndexTitles: [String] {
        var seen: Set<String> = []
        return (tracker.sections ?? []).compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The section a section index title stands for: the first section with that title.
    ///
    /// - Parameters:
    ///   - title: a title of ``sectionIndexTitles``.
    ///   - sectionIndex: its position in ``sectionIndexTitles``, used when no section has the
    ///     title.
    /// - Returns: the section's index.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        tracker.sections?.firstIndex { $0.indexTitle == title } ?? sectionIndex
    }
}

extension FetchedResultsController where ResultType: FetchRequestResult {
    /// The request whose results the controller keeps.
    public var fetchRequest: FetchRequest<ResultType> { tracker.request as! FetchRequest<ResultType> }

    /// Runs `request` in `context` for a controller.
    private static func query(
        _ request: FetchRequest<ResultType>, in context: ManagedObjectContext
    ) throws -> FetchedResultsQuery {
        // As in Core Data, an empty array is accepted (the objects keep the fetch's order); only
        // a request without sort descriptors is refused.
        guard let descriptors = request.sortDescriptors else {
            throw CoreDataError(
                .coreData, "a fetched results controller requires a fetch request with sort descriptors")
        }
        guard request.resultType == .managedObjectResultType else {
            throw CoreDataError(.coreData, "a fetched results controller requires a fetch request of managed objects")
        }
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        let entity = try request.resolveEntity(in: model)
        let objects = try context.fetch(request).compactMap { $0 as? ManagedObject }
        return FetchedResultsQuery(
            objects: objects, entity: entity, includesSubentities: request.includesSubentities,
            predicate: request.predicate,
            descriptors: descriptors)
    }
}
