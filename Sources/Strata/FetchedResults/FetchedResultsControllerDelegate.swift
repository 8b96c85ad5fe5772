import Foundation

/// Receives the changes of a fetched results controller's results (Core Data's
/// `NSFetchedResultsControllerDelegate`). Every method has a default that does nothing.
///
/// The controller reports each change of its context (after each `processPendingChanges()`,
/// hence each save and merge) in this order: ``controllerWillChangeContent(_:)``, the section
/// changes, the object changes, ``controller(_:didChangeContentWith:)``, then
/// ``controllerDidChangeContent(_:)``. Deleted and moved-from positions are those before the
/// change; inserted and moved-to positions (and the new position of an update) those after
/// it, as a table view's batch updates expect them. Unlike Core Data, which calls only the
/// difference method when a delegate implements it, Strata calls every method: Swift cannot
/// tell which ones a delegate implements.
///
/// The controller passed is a view of the reporting controller with erased result type
/// (sharing its results, but not the same instance).
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// Called before the controller reports a change of its results.
    ///
    /// - Parameter controller: the controller.
    func controllerWillChangeContent(_ controller: FetchedResultsController<FetchRequestResult>)

    /// Called for each object inserted into, deleted from, moved within, or updated in the
    /// results.
    ///
    /// - Parameters:
    ///   - controller: the controller.
    ///   - anObject: the object.
    ///   - indexPath: its position before the change (`nil` for an insert).
    ///   - type: the kind of change.
    ///   - newIndexPath: its position after the change (`nil` for a delete).
    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?)

    /// Called for each section inserted (at its index after the change) or deleted (at its
    /// index before the change).
    ///
    /// - Parameters:
    ///   - controller: the controller.
    ///   - sectionInfo: the section.
    ///   - sectionIndex: its index.
    ///   - type: `.insert` or `.delete`.
    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)

    /// Called after the controller reported a change of its results.
    ///
    /// - Parameter controller: the controller.
    func controllerDidChangeContent(_ controller: FetchedResultsController<FetchRequestResult>)

    /// The section index title of a section name; `nil` (the default) uses the controller's
    /// ``FetchedResultsController/sectionIndexTitle(forSectionName:)``.
    ///
    /// - Parameters:
    ///   - controller: the controller.
    ///   - sectionName: the section's name.
    /// - Returns: the title, or `nil` for the default.
    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, sectionIndexTitleForSectionName sectionName: String
    ) -> String?

    /// Called with the change of the results as a difference of their object IDs in order
    /// (across sections), Strata's stand-in for Core Data's snapshot callbacks: applying it
    /// to the IDs before the change gives the IDs after it. Moves are a removal and an
    /// insertion associated with each other; updates in place are not part of it. IDs are
    /// the objects' IDs when the change is reported (an object inserted and later saved is
    /// reported with its temporary ID).
    ///
    /// - Parameters:
    ///   - controller: the controller.
    ///   - difference: the difference.
    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>,
        didChangeContentWith difference: CollectionDifference<ManagedObjectID>)
}

extension FetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: FetchedResultsController<FetchRequestResult>) {}

    /// Does nothing.
    public func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}

    /// Does nothing.
    public func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {}

    /// Does nothing.
    public func controllerDidChangeContent(_ controller: FetchedResultsController<FetchRequestResult>) {}

    /// Returns `nil`: the controller's default title.
    public func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, sectionIndexTitleForSectionName sectionName: String
    ) -> String? {
        nil
    }

    /// Does nothing.
    public func controller(
        _ controller: FetchedResultsController<FetchRequestResult>,
        didChangeContentWith difference: CollectionDifference<ManagedObjectID>
    ) {}
}
