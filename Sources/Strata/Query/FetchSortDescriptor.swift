import Foundation

/// Orders fetch results by a property key (Core Data's `NSSortDescriptor(key:ascending:)`,
/// renamed so it does not clash with Foundation's `SortDescriptor`). `Sendable`.
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The property (or dotted key path through to-one relationships) to order by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// Whether strings compare without case. The default is `false`.
    public var caseInsensitive: Bool

    /// Creates a sort descriptor.
    public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    /// How it prints: `name ascending`.
    public var description: String { "\(key) \(ascending ? "ascending" : "descending")" }

    /// Compares two values of the key: `nil` first, then by ``FetchValue`` order.
    func compare(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult {
        let result = FetchValue.compare(lhs, rhs, caseInsensitive: caseInsensitive)
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
