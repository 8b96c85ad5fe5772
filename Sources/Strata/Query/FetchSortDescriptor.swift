import Foundation

/// Orders fetch results by a property key (Core Data's `NSSortDescriptor(key:ascending:selector:)`,
/// renamed so it does not clash with Foundation's `SortDescriptor`). `Sendable`.
///
/// `nil` sorts before every value when ascending (after every value when descending), as Core
/// Data's SQLite store orders `NULL`.
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// How strings are compared (Core Data's comparison selectors); other values compare by
    /// their natural order whatever the comparison.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        /// `compare:`: by Unicode order, case and diacritics significant (the default).
        case compare = "compare:"
        /// `caseInsensitiveCompare:`.
        case caseInsensitiveCompare = "caseInsensitiveCompare:"
        /// `localizedCompare:`: by the current locale's collation.
        case localizedCompare = "localizedCompare:"
        /// `localizedCaseInsensitiveCompare:`.
        case localizedCaseInsensitiveCompare = "localizedCaseInsensitiveCompare:"
        /// `localizedStandardCompare:`: as the Finder sorts, numbers in strings by value.
        case localizedStandardCompare = "localizedStandardCompare:"
    }

    /// The property (or dotted key path through to-one relationships) to order by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare. The default is ``Comparison/compare``.
    public var comparison: Comparison

    /// Creates a sort descriptor comparing strings with `comparison` (Core Data's
    /// `init(key:ascending:selector:)`).
    public init(key: String, ascending: Bool = true, comparison: Comparison) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }

    /// Creates a sort descriptor; `caseInsensitive` compares strings with
    /// ``Comparison/caseInsensitiveCompare``.
    public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.init(key: key, ascending: ascending, comparison: caseInsensitive ? .caseInsensitiveCompare : .compare)
    }

    /// Creates a sort descriptor on the property a key path of a `@Managed` property names
    /// (Core Data's `NSSortDescriptor(keyPath:ascending:)`): `\Employee.name`, or a path
    /// through to-one relationships, `\Employee.department?.name`.
    ///
    /// - Important: a key path that does not name `@Managed` properties stops the program, as
    ///   Core Data raises for a key path that is not key-value coding compliant.
    public init<Root: ManagedObject, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        guard let key = ManagedKeyPathNames.name(of: keyPath) else {
            preconditionFailure("FetchSortDescriptor(keyPath: \(keyPath)): not a key path of @Managed properties")
        }
        self.init(key: key, ascending: ascending)
    }

    /// Whether strings compare without case.
    public var caseInsensitive: Bool {
        get { comparison == .caseInsensitiveCompare || comparison == .localizedCaseInsensitiveCompare }
        set { comparison = newValue ? .caseInsensitiveCompare : .compare }
    }

    /// A descriptor with the opposite order (Core Data's `reversedSortDescriptor`).
    public var reversedSortDescriptor: FetchSortDescriptor {
        FetchSortDescriptor(key: key, ascending: !ascending, comparison: comparison)
    }

    /// How it prints: `name ascending`, `name descending caseInsensitiveCompare:`.
    public var description: String {
        "\(key) \(ascending ? "ascending" : "descending")" + (comparison == .compare ? "" : " \(comparison.rawValue)")
    }

    /// Compares two values of the key in the descriptor's order.
    public func compare(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult {
        let result = Self.order(lhs, rhs, comparison)
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Orders two values ascending: `nil` first, strings by `comparison`, others by
    /// ``FetchValue`` order.
    static func order(_ lhs: Any?, _ rhs: Any?, _ comparison: Comparison) -> ComparisonResult {
        if comparison != .compare, let left = lhs as? String, let right = rhs as? String {
            switch comparison {
            case .compare: break
            case .caseInsensitiveCompare: return left.caseInsensitiveCompare(right)
            case .localizedCompare: return left.localizedCompare(right)
            case .localizedCaseInsensitiveCompare: return left.localizedCaseInsensitiveCompare(right)
            case .localizedStandardCompare: return left.localizedStandardCompare(right)
            }
        }
        return FetchValue.compare(lhs, rhs)
    }
}
