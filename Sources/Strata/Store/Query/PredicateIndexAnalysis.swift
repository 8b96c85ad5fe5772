import Foundation
internal import StrataStore

/// What the fetch indexes can do for a predicate on one entity hierarchy.
enum PredicateIndexAnalysis {
    /// Every row matches (`TRUEPREDICATE`).
    case all
    /// No row matches (`FALSEPREDICATE`, `salary > nil`).
    case none
    /// The access finds the matching rows (exactly when its ``IndexAccess/isExact`` and
    /// `complete`; a superset otherwise).
    case access(IndexAccess, complete: Bool)
    /// No index helps: every row is evaluated.
    case scan

    /// Analyses `predicate` for rows of `entity` laid out as `layout` by `mapping`.
    static func analyse(
        _ predicate: FetchPredicate, entity: EntityDescription, layout: EntityLayout, mapping: StoreMapping
    ) -> PredicateIndexAnalysis {
        let columns = mapping.schema.entities[layout.storeEntity].columns
        func analyse(_ predicate: FetchPredicate) -> PredicateIndexAnalysis {
            switch predicate.node {
            case .constant(let value):
                return value ? .all : .none
            case .block:
                return .scan
            case .not(let inner):
                switch analyse(inner) {
                case .all: return .none
                case .none: return .all
                default: return .scan
                }
            case .and(let parts):
                var accesses: [IndexAccess] = []
                var complete = true
                for part in parts {
                    switch analyse(part) {
                    case .all: continue
                    case .none: return .none
                    case .scan: complete = false
                    case .access(let access, let partComplete):
                        complete = complete && partComplete
                        if case .intersection(let inner) = access { accesses += inner } else { accesses.append(access) }
                    }
                }
                if accesses.isEmpty { return complete ? .all : .scan }
                return .access(accesses.count == 1 ? accesses[0] : .intersection(accesses), complete: complete)
            case .or(let parts):
                var accesses: [IndexAccess] = []
                var complete = true
                for part in parts {
                    switch analyse(part) {
                    case .all: return .all
                    case .none: continue
                    case .scan: return .scan
                    case .access(let access, let partComplete):
                        complete = complete && partComplete
                        if case .union(let inner) = access { accesses += inner } else { accesses.append(access) }
                    }
                }
                if accesses.isEmpty { return .none }
                return .access(accesses.count == 1 ? accesses[0] : .union(accesses), complete: complete)
            case .comparison(let comparison):
                return Self.analyse(comparison, entity: entity, layout: layout, columns: columns, requiresIndex: true)
                    ?? .scan
            }
        }
        return analyse(predicate)
    }

    /// `predicate` without the parts of its top-level conjunction that a fetch index answers
    /// exactly (`nil` when nothing is left): what the rows an exact lookup found still have to
    /// meet, for a conjunction whose index access is that one lookup.
    static func unanswered(
        _ predicate: FetchPredicate, entity: EntityDescription, layout: EntityLayout, mapping: StoreMapping
    ) -> FetchPredicate? {
        let parts: [FetchPredicate]
        if case .and(let conjuncts) = predicate.node { parts = conjuncts } else { parts = [predicate] }
        let left = parts.filter { part in
            guard
                case .access(.lookup(let lookup), complete: true) = analyse(
                    part, entity: entity, layout: layout, mapping: mapping)
            else { return true }
            return !lookup.isExact
        }
        if left.count == parts.count { return predicate }
        if left.count <= 1 { return left.first }
        return FetchPredicate(andPredicateWithSubpredicates: left)
    }

    /// The analysis of one comparison: a lookup in the column's fetch index (or, without
    /// `requiresIndex`, the same test made on the column's value in a row), or `nil` when the
    /// comparison is not one of a column with a constant.
    static func analyse(
        _ comparison: FetchPredicate.Comparison, entity: EntityDescription, layout: EntityLayout,
        columns: [ColumnSchema], requiresIndex: Bool
    ) -> PredicateIndexAnalysis? {
        guard comparison.modifier == .direct, comparison.options.isEmpty else { return nil }
        var operation = comparison.operator
        let key: String
        let constant: Any?
        switch (comparison.left, comparison.right) {
        case (.keyPath(let path, on: .evaluatedObject), .constant(let value)):
            key = path
            constant = value
        case (.constant(let value), .keyPath(let path, on: .evaluatedObject)):
            guard let mirrored = mirror(operation) else { return nil }
            operation = mirrored
            key = path
            constant = value
        default:
            return nil
        }
        guard !key.containsASCII("."), let property = entity.propertiesByName[key], let column = layout.columns[key],
            columns[column].hasFetchIndex || !requiresIndex
        else { return nil }
        if let relationship = property as? RelationshipDescription {
            guard !relationship.isToMany, let destination = relationship.destinationEntity else { return nil }
            let root = IndexLookup.rootName(destination)
            var ids: [ManagedObjectID?] = []
            switch operation {
            case .equalTo:
                guard let id = objectID(constant) else { return nil }
                ids = [id]
            case .in:
                guard let elements = collection(constant) else { return nil }
                for element in elements {
                    guard let id = objectID(element) else { return nil }
                    ids.append(id)
                }
            default:
                return nil
            }
            let target = IndexLookup(
                column: column, key: key, target: .references(ids, root: root), isExact: true, operation: operation,
                constant: constant)
            return .access(.lookup(target), complete: true)
        }
        guard let attribute = property as? AttributeDescription else { return nil }
        let type = columns[column].type
        // Decimals compare as doubles in memory and as decimals in the index: close, not equal.
        let exactType = type != .decimal
        func make(_ query: IndexQuery, exact: Bool = exactType) -> PredicateIndexAnalysis {
            .access(
                .lookup(
                    IndexLookup(
                        column: column, key: key, target: .queries([query]), isExact: exact, operation: operation,
                        constant: constant)), complete: true)
        }
        switch operation {
        case .equalTo:
            guard let value = indexValue(constant, type, attribute) else { return nil }
            return make(.equal(value))
        case .notEqualTo:
            // Only `!= nil` is one range: every value.
            guard constant == nil else { return nil }
            return make(.range(lower: nil, upper: nil))
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard constant != nil else { return PredicateIndexAnalysis.none }
            guard let value = indexValue(constant, type, attribute) else { return nil }
            let inclusive = operation == .lessThanOrEqualTo || operation == .greaterThanOrEqualTo
            let bound = IndexBound(value, inclusive: inclusive)
            let upper = operation == .lessThan || operation == .lessThanOrEqualTo
            return make(upper ? .range(lower: nil, upper: bound) : .range(lower: bound, upper: nil))
        case .between:
            guard let bounds = collection(constant), bounds.count == 2 else { return nil }
            guard bounds[0] != nil, bounds[1] != nil else { return PredicateIndexAnalysis.none }
            guard let low = indexValue(bounds[0], type, attribute), let high = indexValue(bounds[1], type, attribute)
            else { return nil }
            return make(.range(lower: IndexBound(low, inclusive: true), upper: IndexBound(high, inclusive: true)))
        case .in:
            guard let elements = collection(constant) else { return nil }
            var values: [Value] = []
            for element in elements {
                guard let value = indexValue(element, type, attribute) else { return nil }
                values.append(value)
            }
            return make(.in(values))
        case .beginsWith:
            guard type == .string, let prefix = constant as? String else { return nil }
            // The prefix range holds every string with the prefix (and perhaps a few more
            // after Unicode normalization): the comparison is evaluated again on the rows.
            let lower = IndexBound(.string(prefix), inclusive: true)
            return make(
                .range(lower: lower, upper: successor(of: prefix).map { IndexBound(.string($0), inclusive: false) }),
                exact: false)
        default:
            return nil
        }
    }

    /// The operator with its operands swapped (`5 < salary` is `salary > 5`).
    private static func mirror(_ operation: ComparisonOperator) -> ComparisonOperator? {
        switch operation {
        case .equalTo, .notEqualTo: return operation
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }

    /// The elements of an array or set constant.
    private static func collection(_ value: Any?) -> [Any?]? {
        if let array = value as? [Any?] { return array }
        if let array = value as? [Any] { return array.map { $0 } }
        if let set = value as? Set<AnyHashable> { return set.map { $0.base } }
        return nil
    }

    /// The ID a relationship constant names (wrapped, so that `nil` is a value), or `nil` when the
    /// constant is not an object, an ID or `nil`.
    private static func objectID(_ value: Any?) -> ManagedObjectID?? {
        guard let value else { return .some(nil) }
        if let id = value as? ManagedObjectID { return .some(id) }
        if let object = value as? ManagedObject { return .some(object.objectID) }
        return nil
    }

    /// The index value of a constant compared with a column of `type`, or `nil` when the index
    /// would not compare them as the predicate does (another kind of value).
    private static func indexValue(_ constant: Any?, _ type: ColumnType, _ attribute: AttributeDescription) -> Value? {
        guard let constant else { return .null }
        switch type {
        case .int16, .int32, .int64, .float, .double, .decimal:
            guard !(constant is Bool), let number = FetchValue.numeric(constant) else { return nil }
            switch number {
            case .integer(let integer): return .int(integer)
            case .unsigned(let integer): if let exact = Int64(exactly: integer) { return .int(exact) }
            case .floating, .decimal: break
            }
            if let exact = Int64(exactly: number.doubleValue) { return .int(exact) }
            return .double(number.doubleValue)
        case .string:
            return (constant as? String).map(Value.string)
        case .bool:
            return (constant as? Bool).map(Value.bool)
        case .date:
            return (constant as? Date).map(Value.date)
        case .uuid:
            return (constant as? UUID).map(Value.uuid)
        default:
            return nil
        }
    }

    /// The smallest string greater than every string starting with `prefix`: its last scalar
    /// incremented (dropping trailing scalars that cannot be); `nil` when none is.
    private static func successor(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if (0xD800...0xDFFF).contains(next) { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var result = ""
                result.unicodeScalars.append(contentsOf: scalars)
                return result
            }
        }
        return nil
    }

    /// A constant as the plan prints it.
    static func describe(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let string as String: return "\"\(string)\""
        case let bool as Bool: return bool ? "YES" : "NO"
        case let object as ManagedObject: return object.objectID.description
        case let array as [Any?]: return "{" + array.map(describe).joined(separator: ", ") + "}"
        case let array as [Any]: return "{" + array.map { describe($0) }.joined(separator: ", ") + "}"
        case let value?: return "\(value)"
        }
    }
}
