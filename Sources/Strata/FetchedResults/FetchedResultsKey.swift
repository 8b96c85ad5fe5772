import Foundation

/// Where an object goes in a controller's results: its section name, its values of the sort
/// keys, and the order in which the controller first saw it (which breaks ties, so that tied
/// objects keep the order the fetch gave them).
struct FetchedResultsKey {
    var section: String
    var values: [Any?]
    var sequence: Int
}

/// The order of a controller's results: its request's sort descriptors, then first sight.
struct FetchedResultsOrder {
    let descriptors: [FetchSortDescriptor]
    let sectionNameKeyPath: String?

    /// The key of `object`, read from its current values.
    func key(of object: ManagedObject, sequence: Int) -> FetchedResultsKey {
        let values = descriptors.map { try? FetchPredicate.value(atKeyPath: $0.key, of: object) }
        let section =
            sectionNameKeyPath.map { Self.sectionName(try? FetchPredicate.value(atKeyPath: $0, of: object)) } ?? ""
        return FetchedResultsKey(section: section, values: values, sequence: sequence)
    }

    /// Whether `lhs` comes before `rhs`.
    func precedes(_ lhs: FetchedResultsKey, _ rhs: FetchedResultsKey) -> Bool {
        switch compareValues(lhs, rhs) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return lhs.sequence < rhs.sequence
        }
    }

    /// Compares the sort values of two keys, ties between them left as `.orderedSame`.
    func compareValues(_ lhs: FetchedResultsKey, _ rhs: FetchedResultsKey) -> ComparisonResult {
        for (position, descriptor) in descriptors.enumerated() {
            let result = descriptor.compare(lhs.values[position], rhs.values[position])
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// The section name of a section key path value: its description, `"1"`/`"0"` for
    /// Booleans (as Core Data's numbers print), `""` for `nil`.
    static func sectionName(_ value: Any?) -> String {
        switch value {
        case nil: return ""
        case let string as String: return string
        case let flag as Bool: return flag ? "1" : "0"
        case let value?: return "\(value)"
        }
    }
}
