import Foundation

extension FetchRequest where ResultType: ManagedObject {
    /// A request for the subclass's entity with a Foundation `#Predicate` and `SortDescriptor`s,
    /// translated to a ``FetchPredicate`` and ``FetchSortDescriptor``s so that the fetch is planned
    /// on the fetch indexes as a format predicate is.
    ///
    /// ```swift
    /// let request = try FetchRequest<Employee>(
    ///     predicate: #Predicate { $0.salary > 100_000 }, sortBy: [SortDescriptor(\.name)])
    /// ```
    ///
    /// - Throws: ``CoreDataError`` `.coreData` when a sort descriptor's key path names no model
    ///   property (see ``FetchSortDescriptor/init(_:)``).
    public convenience init(predicate: Predicate<ResultType>? = nil, sortBy: [SortDescriptor<ResultType>] = []) throws {
        self.init(entityName: String(describing: ResultType.self))
        self.predicate = predicate.map { FetchPredicate($0) }
        if !sortBy.isEmpty {
            sortDescriptors = try sortBy.map { descriptor in
                guard let translated = FetchSortDescriptor(descriptor) else {
                    throw CoreDataError(
                        .coreData,
                        "the sort descriptor \(descriptor) orders by a key path that names no property of \(ResultType.self)"
                    )
                }
                return translated
            }
        }
    }
}
