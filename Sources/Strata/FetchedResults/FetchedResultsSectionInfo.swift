/// One section of a fetched results controller (Core Data's `NSFetchedResultsSectionInfo`).
public protocol FetchedResultsSectionInfo: AnyObject {
    /// The section's name: the section key path's value of its objects (`""` for `nil`, or
    /// when the controller has no section key path).
    var name: String { get }
    /// The section's title in a section index.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section as a controller keeps it: its objects in order, each with the key it was
/// placed by.
final class FetchedResultsSection: FetchedResultsSectionInfo {
    let name: String
    /// The section index title, asked of the controller when first read.
    private let title: (String) -> String?
    private var cachedTitle: String??
    /// The objects, in order.
    var members: [ManagedObject] = []
    /// The key of each of ``members``.
    var keys: [FetchedResultsKey] = []

    init(name: String, title: @escaping (String) -> String?) {
        self.name = name
        self.title = title
    }

    var indexTitle: String? {
        if let cachedTitle { return cachedTitle }
        let computed = title(name)
        cachedTitle = .some(computed)
        return computed
    }

    var numberOfObjects: Int { members.count }

    var objects: [Any]? { members }

    /// The position of `key` among ``keys``: where an object of that key is, or would go.
    func position(of key: FetchedResultsKey, by order: FetchedResultsOrder) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if order.precedes(keys[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The position of `object`, which was placed by `key`; `nil` when it is not here.
    func position(of object: ManagedObject, placedBy key: FetchedResultsKey, by order: FetchedResultsOrder) -> Int? {
        let position = position(of: key, by: order)
        if position < members.count, members[position] === object { return position }
        return members.firstIndex { $0 === object }
    }
}
