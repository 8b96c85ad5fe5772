import Foundation

extension FetchSortDescriptor {
    /// A sort descriptor equivalent to a Foundation `SortDescriptor` of a `ManagedObject`
    /// subclass (Core Data's `NSSortDescriptor(_:)` taking a `SortDescriptor`), or `nil` when its
    /// key path names no model property (a computed property, or a descriptor made from a
    /// comparator rather than a key path).
    ///
    /// ```swift
    /// let bySalary = FetchSortDescriptor(SortDescriptor(\Employee.salary, order: .reverse))
    /// // salary descending
    /// ```
    ///
    /// The order becomes ``ascending``; a string comparator becomes ``comparison``: `.lexical`
    /// is ``Comparison/compare``, a localized comparator ``Comparison/localizedCompare`` (or
    /// ``Comparison/localizedStandardCompare`` with `.numeric`), a case-insensitive one
    /// ``Comparison/caseInsensitiveCompare`` or ``Comparison/localizedCaseInsensitiveCompare``.
    /// Key paths through to-one relationships (`\Employee.department?.name`) become dotted keys.
    public init?<Compared: ManagedObject>(_ descriptor: SortDescriptor<Compared>) {
        guard let keyPath = descriptor.keyPath, let key = ManagedKeyPathNames.name(of: keyPath) else { return nil }
        let comparison = descriptor.stringComparator.map { Self.comparison(String.Comparator($0)) } ?? .compare
        self.init(key: key, ascending: descriptor.order == .forward, comparison: comparison)
    }

    /// The comparison selector that compares strings as `comparator` does.
    static func comparison(_ comparator: String.Comparator) -> Comparison {
        let localized = comparator.locale != nil
        if comparator.options.contains(.numeric) { return .localizedStandardCompare }
        if comparator.options.contains(.caseInsensitive) {
            return localized ? .localizedCaseInsensitiveCompare : .caseInsensitiveCompare
        }
        return localized ? .localizedCompare : .compare
    }
}
