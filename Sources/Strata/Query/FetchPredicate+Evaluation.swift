import Foundation

extension FetchPredicate {
    /// Whether `object` meets the predicate (Core Data's `evaluate(with:)`).
    ///
    /// `object` is a managed object (keys read with ``ManagedObject/value(forKey:)``, to-many
    /// relationships as sets or arrays of objects), a `[String: Any]` dictionary, or any value
    /// for predicates on `SELF`. A comparison whose key the object does not have is false, as is
    /// one that reads an unbound substitution variable.
    public func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: nil)
    }

    /// Whether `object` meets the predicate with `$NAME` variables taken from
    /// `substitutionVariables` (Core Data's `evaluate(with:substitutionVariables:)`).
    public func evaluate(with object: Any?, substitutionVariables: [String: Any]?) -> Bool {
        evaluate(with: object, substitutionVariables: substitutionVariables, valueForKey: Self.value(of:forKey:))
    }

    /// Whether `root` meets the predicate, with `valueForKey` giving the value of one key of
    /// one object: of `root` itself, and of whatever it returned for earlier keys of a dotted
    /// path (a related object, an ID, each element of a to-many collection). The evaluator walks
    /// paths, applies collection operators to the collections it gets, and binds `SELF` and
    /// subquery variables; a throwing `valueForKey` makes the comparison false. Block predicates
    /// get `root`.
    func evaluate(
        with root: Any?, substitutionVariables: [String: Any]? = nil, valueForKey: (Any, String) throws -> Any?
    ) -> Bool {
        withoutActuallyEscaping(valueForKey) { lookup in
            let evaluation = PredicateEvaluation(valueForKey: lookup, substitutionVariables: substitutionVariables)
            return evaluation.matches(self, object: root, bindings: substitutionVariables ?? [:])
        }
    }

    /// Whether the predicate has a block part, which needs the realized object.
    var containsBlock: Bool {
        switch node {
        case .block: return true
        case .constant, .comparison: return false
        case .and(let all), .or(let all): return all.contains { $0.containsBlock }
        case .not(let inner): return inner.containsBlock
        }
    }

    /// The value at a dotted key path of `object` (through to-one relationships, collection
    /// operators included).
    static func value(atKeyPath path: String, of object: ManagedObject) throws -> Any? {
        let evaluation = PredicateEvaluation(valueForKey: value(of:forKey:), substitutionVariables: nil)
        return try evaluation.walk(object, path.dottedKeys[...])
    }

    /// The value of `key` of a managed object or dictionary, as `evaluate(with:)` reads it.
    static func value(of object: Any, forKey key: String) throws -> Any? {
        if FetchValue.isObject(object) {
            if let object = object as? ManagedObject { return try object.value(forCheckedKey: key) }
            if let dictionary = object as? NSDictionary { return dictionary[key] }
        } else if let dictionary = object as? [String: Any] {
            return dictionary[key]
        } else if let dictionary = object as? [AnyHashable: Any] {
            return dictionary[key]
        }
        if let target = object as? any ExpressionFunctionTarget {
            return try target.value(forFunction: "valueForKey:", arguments: [key])
        }
        throw PredicateEvaluation.Failure()
    }

    /// Every key path the predicate reads from the evaluated object (`department.name`,
    /// `employees.@count`, a subquery's collection), not those read from subquery elements or
    /// variables.
    var keyPaths: Set<String> {
        switch node {
        case .constant, .block: return []
        case .and(let all), .or(let all): return all.reduce(into: Set<String>()) { $0.formUnion($1.keyPaths) }
        case .not(let inner): return inner.keyPaths
        case .comparison(let comparison): return comparison.left.keyPaths.union(comparison.right.keyPaths)
        }
    }
}

extension FetchExpression {
    /// The key paths the expression reads from the evaluated object.
    var keyPaths: Set<String> {
        switch self {
        case .constant, .evaluatedObject, .variable: return []
        case .keyPath(let path, on: .evaluatedObject): return [path]
        case .keyPath(_, on: let operand): return operand.keyPaths
        case .aggregate(let elements): return elements.reduce(into: Set<String>()) { $0.formUnion($1.keyPaths) }
        case .subquery(let collection, _, _): return collection.keyPaths
        case .function(_, let arguments): return arguments.reduce(into: Set<String>()) { $0.formUnion($1.keyPaths) }
        case .method(let target, _, let arguments):
            return arguments.reduce(into: target.keyPaths) { $0.formUnion($1.keyPaths) }
        case .fetch(let request, let context, _): return request.keyPaths.union(context.keyPaths)
        }
    }
}

/// One evaluation of a predicate: how keys are read and the substitution variables.
struct PredicateEvaluation {
    /// A value could not be read: the comparison reading it is false.
    struct Failure: Error {}

    let valueForKey: (Any, String) throws -> Any?
    let substitutionVariables: [String: Any]?

    /// Whether `object` meets `predicate` with variables bound as `bindings`.
    func matches(_ predicate: FetchPredicate, object: Any?, bindings: [String: Any]) -> Bool {
        switch predicate.node {
        case .constant(let value): return value
        case .and(let all): return all.allSatisfy { matches($0, object: object, bindings: bindings) }
        case .or(let any): return any.contains { matches($0, object: object, bindings: bindings) }
        case .not(let inner): return !matches(inner, object: object, bindings: bindings)
        case .block(let block): return block(object, substitutionVariables)
        case .comparison(let comparison):
            do {
                let left = try value(comparison.left, object: object, bindings: bindings)
                let right = try value(comparison.right, object: object, bindings: bindings)
                switch comparison.modifier {
                case .direct:
                    return Self.test(left, comparison.operator, right, comparison.options)
                case .any:
                    return Self.members(left).contains { Self.test($0, comparison.operator, right, comparison.options) }
                case .all:
                    return Self.members(left).allSatisfy {
                        Self.test($0, comparison.operator, right, comparison.options)
                    }
                }
            } catch {
                return false
            }
        }
    }

    /// The elements `ANY`/`ALL` range over: a collection's elements, nothing for `nil`, or the value itself.
    private static func members(_ value: Any?) -> [Any?] {
        guard let value else { return [] }
        return FetchValue.elements(of: value) ?? [value]
    }

    /// The value of `expression` for `object`.
    func value(_ expression: FetchExpression, object: Any?, bindings: [String: Any]) throws -> Any? {
        switch expression {
        case .constant(let value): return value
        case .evaluatedObject: return object
        case .variable(let name):
            guard let value = bindings[name] else { throw Failure() }
            return FetchValue.unwrap(value)
        case .aggregate(let elements):
            return try elements.map { try value($0, object: object, bindings: bindings) }
        case .keyPath(let path, on: let operand):
            let base = try value(operand, object: object, bindings: bindings)
            if !path.utf8.contains(UInt8(ascii: ".")) && !path.hasPrefix("@") {
                guard let base = FetchValue.unwrap(base) else { return nil }
                return try step(base, path)
            }
            return try walk(base, path.dottedKeys[...])
        case .subquery(let collection, let variable, let predicate):
            guard let source = try value(collection, object: object, bindings: bindings) else { return [Any?]() }
            guard let elements = FetchValue.elements(of: source) else { throw Failure() }
            var inner = bindings
            return elements.filter { element in
                inner[variable] = element ?? NSNull()
                return matches(predicate, object: element, bindings: inner)
            }
        case .function(let name, let arguments):
            return try Self.function(name, try arguments.map { try value($0, object: object, bindings: bindings) })
        case .method(let target, let selector, let arguments):
            let receiver = try value(target, object: object, bindings: bindings)
            let values = try arguments.map { try value($0, object: object, bindings: bindings) }
            if selector == "valueForKey:" || selector == "valueForKeyPath:", values.count == 1,
                let key = values[0] as? String
            {
                return try walk(receiver, selector == "valueForKey:" ? [key] : key.dottedKeys[...])
            }
            guard let target = receiver as? any ExpressionFunctionTarget else { throw Failure() }
            return try target.value(forFunction: selector, arguments: values)
        case .fetch(let request, let context, let countOnly):
            guard let request = try value(request, object: object, bindings: bindings) as? FetchRequest<FetchRequestResult>,
                let context = try value(context, object: object, bindings: bindings) as? ManagedObjectContext
            else { throw Failure() }
            return countOnly ? try context.count(for: request) : try context.fetch(request)
        }
    }

    /// The value at `path` from `start`: keys read one by one (on each element of a
    /// collection), `@count` and the `@sum`/`@avg`/`@min`/`@max` of the rest of the path.
    func walk(_ start: Any?, _ path: ArraySlice<String>) throws -> Any? {
        var current = FetchValue.unwrap(start)
        var remaining = path
        while let key = remaining.popFirst() {
            guard let value = current else { return nil }
            if key.hasPrefix("@") {
                guard let elements = FetchValue.elements(of: value) else { throw Failure() }
                if key == "@count" { return elements.count }
                let values = try elements.map { try walk($0, remaining) }.compactMap { $0 }
                return try Self.aggregate(key, values)
            }
            current = try step(value, key)
        }
        return current
    }

    /// The value of `key` of `value`, or of each of its elements when it is a collection
    /// (collections the elements return are flattened into the result).
    private func step(_ value: Any, _ key: String) throws -> Any? {
        if key == "self" || key == "SELF" { return value }
        guard let elements = FetchValue.elements(of: value) else {
            return FetchValue.unwrap(try valueForKey(value, key))
        }
        var mapped: [Any?] = []
        for element in elements {
            guard let element else {
                mapped.append(nil)
                continue
            }
            let inner = FetchValue.unwrap(try valueForKey(element, key))
            if let inner, let nested = FetchValue.elements(of: inner) { mapped += nested } else { mapped.append(inner) }
        }
        return mapped
    }

    /// `@sum`, `@avg`, `@min` or `@max` of `values`: 0 for the sum of none, `nil` for the others of none.
    static func aggregate(_ operation: String, _ values: [Any]) throws -> Any? {
        switch operation {
        case "@min", "@max":
            var best: Any?
            for value in values {
                guard let current = best else {
                    best = value
                    continue
                }
                guard let order = FetchValue.order(value, current) else { throw Failure() }
                if order == (operation == "@min" ? .orderedAscending : .orderedDescending) { best = value }
            }
            return best
        case "@sum", "@avg":
            let numbers = try values.map { value throws(Failure) -> FetchValue.Number in
                guard let number = FetchValue.numeric(value) else { throw Failure() }
                return number
            }
            if operation == "@avg" && numbers.isEmpty { return nil }
            let sum: FetchValue.Number
            if numbers.contains(where: { if case .decimal = $0 { true } else { false } }) {
                sum = .decimal(numbers.reduce(Decimal(0)) { $0 + ($1.decimalValue ?? .nan) })
            } else if numbers.contains(where: { if case .floating = $0 { true } else { false } }) {
                sum = .floating(numbers.reduce(0) { $0 + $1.doubleValue })
            } else {
                var total: Int128 = 0
                for number in numbers { total += number.wideInteger! }
                sum = Int64(exactly: total).map { .integer($0) } ?? .floating(Double(total))
            }
            guard operation == "@avg" else { return sum.value }
            if case .decimal(let total) = sum { return total / Decimal(numbers.count) }
            if case .integer(let total) = sum { return Double(total) / Double(numbers.count) }
            return sum.doubleValue / Double(numbers.count)
        default:
            throw Failure()
        }
    }

    /// Whether `left` and `right` compare true under `comparison` (the NSPredicate rules: an
    /// ordering with `nil` or values of different kinds is false; `IN` and `CONTAINS` look into
    /// collections and strings).
    static func test(
        _ left: Any?, _ comparison: ComparisonOperator, _ right: Any?, _ options: ComparisonOptions
    ) -> Bool {
        switch comparison {
        case .equalTo: return FetchValue.equal(left, right, options: options)
        case .notEqualTo: return !FetchValue.equal(left, right, options: options)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let left, let right, let order = FetchValue.order(left, right, options: options) else { return false }
            switch comparison {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .in:
            guard let right else { return false }
            if let text = right as? String {
                guard let part = left as? String else { return false }
                return contains(text, part, options)
            }
            return FetchValue.elements(of: right)?.contains { FetchValue.equal(left, $0, options: options) } ?? false
        case .contains:
            guard let left else { return false }
            if let text = left as? String {
                guard let part = right as? String else { return false }
                return contains(text, part, options)
            }
            return FetchValue.elements(of: left)?.contains { FetchValue.equal($0, right, options: options) } ?? false
        case .beginsWith, .endsWith:
            guard let text = left as? String, let part = right as? String else { return false }
            let folded = FetchValue.fold(text, options), foldedPart = FetchValue.fold(part, options)
            return comparison == .beginsWith ? folded.hasPrefix(foldedPart) : folded.hasSuffix(foldedPart)
        case .like:
            guard let text = left as? String, let pattern = right as? String else { return false }
            return like(Array(FetchValue.fold(text, options)), Array(FetchValue.fold(pattern, options)))
        case .matches:
            guard let text = left as? String, let pattern = right as? String,
                let expression = RegularExpressionCache.expression(pattern, options: options)
            else { return false }
            let subject = options.contains(.diacriticInsensitive) ? FetchValue.fold(text, .diacriticInsensitive) : text
            let range = NSRange(subject.startIndex..., in: subject)
            guard let match = expression.firstMatch(in: subject, options: [.anchored], range: range) else {
                return false
            }
            return match.range == range
        case .between:
            guard let left, let right, let bounds = FetchValue.elements(of: right), bounds.count == 2,
                let lower = bounds[0], let upper = bounds[1],
                let low = FetchValue.order(left, lower, options: options),
                let high = FetchValue.order(left, upper, options: options)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        }
    }

    /// Whether `text` contains `part` under `options`; every string contains the empty string.
    private static func contains(_ text: String, _ part: String, _ options: ComparisonOptions) -> Bool {
        part.isEmpty || FetchValue.fold(text, options).contains(FetchValue.fold(part, options))
    }

    /// Whether `text` matches the wildcard `pattern` as a whole: `*` any run of characters, `?`
    /// one character. Linear backtracking to the last `*`, so no pattern takes more than
    /// `text.count × pattern.count` steps.
    static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0, p = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p
                resume = t
                p += 1
            } else if let starred = star {
                p = starred + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
