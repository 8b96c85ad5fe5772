import Foundation
import StrataTestSupport
@testable import Strata

/// A random predicate: its format string and arguments as a user writes them, and the oracle's
/// own plain evaluation of the same condition, written independently of Strata's evaluator.
struct OracleCondition {
    var format: String
    var arguments: [Any]
    var matches: (OracleItem, OracleDataset) -> Bool
}

/// A random condition on owners (for to-many predicates: ANY, ALL, NONE, @count, @sum, SUBQUERY).
struct OracleOwnerCondition {
    var format: String
    var arguments: [Any]
    var matches: (Int, OracleDataset) -> Bool
}

/// Generates random conditions over the oracle's model.
struct OracleConditionGenerator {
    var random: SplitMix64

    private static let numeric = ["i16", "i32", "i64", "dbl", "flt", "dec"]
    private static let modifiers = ["", "[c]", "[d]", "[cd]"]

    /// A compound of up to `depth` levels.
    mutating func condition(depth: Int = 3) -> OracleCondition {
        guard depth > 0, Int.random(in: 0..<3, using: &random) == 0 else { return leaf() }
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let (a, b) = (condition(depth: depth - 1), condition(depth: depth - 1))
            let word = ["AND", "&&", "and"].randomElement(using: &random)!
            return OracleCondition(format: "(\(a.format)) \(word) (\(b.format))", arguments: a.arguments + b.arguments)
            {
                a.matches($0, $1) && b.matches($0, $1)
            }
        case 1:
            let (a, b) = (condition(depth: depth - 1), condition(depth: depth - 1))
            let word = ["OR", "||", "or"].randomElement(using: &random)!
            return OracleCondition(format: "(\(a.format)) \(word) (\(b.format))", arguments: a.arguments + b.arguments)
            {
                a.matches($0, $1) || b.matches($0, $1)
            }
        default:
            let a = condition(depth: depth - 1)
            let word = ["NOT ", "!"].randomElement(using: &random)!
            return OracleCondition(format: "\(word)(\(a.format))", arguments: a.arguments) { !a.matches($0, $1) }
        }
    }

    /// One comparison on an `Item`.
    mutating func leaf() -> OracleCondition {
        switch Int.random(in: 0..<12, using: &random) {
        case 0...3: return numericLeaf(Self.numeric.randomElement(using: &random)!)
        case 4...6: return stringLeaf()
        case 7: return booleanLeaf()
        case 8: return dateLeaf()
        case 9:
            return Bool.random(using: &random)
                ? uuidLeaf() : identityLeaf(["blob", "link"].randomElement(using: &random)!)
        case 10: return nilLeaf()
        default: return ownerLeaf()
        }
    }

    private mutating func numericLeaf(_ key: String) -> OracleCondition {
        var constant = OracleDataset.value(key, &random)
        // Integers are sometimes compared with a fractional Double, as Core Data allows.
        if key.hasPrefix("i"), Int.random(in: 0..<4, using: &random) == 0, let number = OracleValue.number(constant) {
            constant = number + 0.5
        }
        switch Int.random(in: 0..<9, using: &random) {
        case 0...5:
            let op = ["==", "!=", "<", "<=", ">", ">=", "=<", "=>", "<>", "="].randomElement(using: &random)!
            let test = Self.ordering(op)
            if Int.random(in: 0..<4, using: &random) == 0 {
                // Reversed: the constant on the left.
                return OracleCondition(format: "%@ \(op) %K", arguments: [constant, key]) { item, _ in
                    test(constant, item.values[key])
                }
            }
            let literal = Int.random(in: 0..<2, using: &random) == 0 && !(constant is Decimal)
            return OracleCondition(
                format: literal ? "\(key) \(op) \(constant)" : "%K \(op) %@", arguments: literal ? [] : [key, constant]
            ) {
                item, _ in test(item.values[key], constant)
            }
        case 6, 7:
            let bounds = [OracleDataset.value(key, &random), OracleDataset.value(key, &random)].sorted {
                OracleValue.number($0)! < OracleValue.number($1)!
            }
            let test: (OracleItem, OracleDataset) -> Bool = { item, _ in
                guard let value = item.values[key].flatMap(OracleValue.number) else { return false }
                return OracleValue.number(bounds[0])! <= value && value <= OracleValue.number(bounds[1])!
            }
            return Int.random(in: 0..<2, using: &random) == 0
                ? OracleCondition(format: "%K BETWEEN {%@, %@}", arguments: [key, bounds[0], bounds[1]], matches: test)
                : OracleCondition(format: "%K BETWEEN %@", arguments: [key, bounds], matches: test)
        default:
            let elements = (0..<3).map { _ in OracleDataset.value(key, &random) }
            return OracleCondition(format: "%K IN %@", arguments: [key, elements]) { item, _ in
                elements.contains { OracleValue.equal(item.values[key], $0) }
            }
        }
    }

    private mutating func stringLeaf() -> OracleCondition {
        let key = "text"
        let fragments = ["a", "e", "é", "AF", "z", "ph", "c", "*", "."]
        let source = OracleDataset.strings.randomElement(using: &random)!
        let modifier = Self.modifiers.randomElement(using: &random)!
        let fold = OracleValue.folding(modifier)
        func make(_ op: String, _ constant: Any, _ test: @escaping (String, String) -> Bool) -> OracleCondition {
            let inline = Int.random(in: 0..<2, using: &random) == 0 && constant is String
            let quoted =
                inline
                ? OracleValue.quoted(constant as! String, single: Int.random(in: 0..<2, using: &random) == 0) : "%@"
            return OracleCondition(
                format: "\(inline ? key : "%K") \(op)\(modifier) \(quoted)", arguments: inline ? [] : [key, constant]
            ) {
                item, _ in
                guard let value = item.values[key] as? String, let wanted = constant as? String else { return false }
                return test(fold(value), fold(wanted))
            }
        }
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return make("==", source) { $0 == $1 }
        case 1:
            return OracleCondition(format: "%K !=\(modifier) %@", arguments: [key, source]) { item, _ in
                guard let value = item.values[key] as? String else { return true }
                return fold(value) != fold(source)
            }
        case 2:
            let prefix =
                source.isEmpty || Bool.random(using: &random)
                ? fragments.randomElement(using: &random)! : String(source.prefix(2))
            return make("BEGINSWITH", prefix) { $0.hasPrefix($1) }
        case 3:
            let suffix =
                source.isEmpty || Bool.random(using: &random)
                ? fragments.randomElement(using: &random)! : String(source.suffix(2))
            return make("ENDSWITH", suffix) { $0.hasSuffix($1) }
        case 4: return make("CONTAINS", fragments.randomElement(using: &random)!) { $1.isEmpty || $0.contains($1) }
        case 5:
            let pattern = ["a*", "*e", "?lpha", "caf?", "*", "a*b", "?", "*ü*", "*A*"].randomElement(using: &random)!
            return make("LIKE", pattern) { OracleValue.like($0, pattern: $1) }
        case 6:
            let pattern = ["a.*", "[A-Z].*", ".*e", "(alpha|beta)", "a\\*b", ".{4}"].randomElement(using: &random)!
            let options: NSRegularExpression.Options = modifier.contains("c") ? [.caseInsensitive] : []
            let expression = try! NSRegularExpression(pattern: "^(?:\(pattern))$", options: options)
            return OracleCondition(format: "%K MATCHES\(modifier) %@", arguments: [key, pattern]) { item, _ in
                guard let value = item.values[key] as? String else { return false }
                let folded = modifier.contains("d") ? value.folding(options: .diacriticInsensitive, locale: nil) : value
                return expression.firstMatch(in: folded, range: NSRange(folded.startIndex..., in: folded)) != nil
            }
        case 7:
            let elements = (0..<3).map { _ in OracleDataset.strings.randomElement(using: &random)! }
            return OracleCondition(format: "%K IN\(modifier) %@", arguments: [key, elements]) { item, _ in
                guard let value = item.values[key] as? String else { return false }
                return elements.contains { fold($0) == fold(value) }
            }
        default:
            let op = ["<", "<=", ">", ">="].randomElement(using: &random)!
            let test = Self.ordering(op)
            return OracleCondition(format: "%K \(op) %@", arguments: [key, source]) { item, _ in
                test(item.values[key], source)
            }
        }
    }

    private mutating func booleanLeaf() -> OracleCondition {
        let wanted = Bool.random(using: &random)
        let spelled =
            wanted
            ? ["YES", "TRUE", "true"].randomElement(using: &random)!
            : ["NO", "FALSE", "false"].randomElement(using: &random)!
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            return OracleCondition(format: "flag == \(spelled)", arguments: []) { item, _ in
                (item.values["flag"] as? Bool) == wanted
            }
        case 1:
            return OracleCondition(format: "flag == %@", arguments: [wanted]) { item, _ in
                (item.values["flag"] as? Bool) == wanted
            }
        default:
            return OracleCondition(format: "flag != \(spelled)", arguments: []) { item, _ in
                (item.values["flag"] as? Bool) != wanted
            }
        }
    }

    private mutating func dateLeaf() -> OracleCondition {
        let day = OracleDataset.days.randomElement(using: &random)!
        if Bool.random(using: &random) {
            let other = OracleDataset.days.randomElement(using: &random)!
            let (low, high) = (min(day, other), max(day, other))
            return OracleCondition(format: "day BETWEEN {%@, %@}", arguments: [low, high]) { item, _ in
                guard let value = item.values["day"] as? Date else { return false }
                return low <= value && value <= high
            }
        }
        let op = ["==", "!=", "<", "<=", ">", ">="].randomElement(using: &random)!
        let test = Self.ordering(op)
        return OracleCondition(format: "day \(op) %@", arguments: [day]) { item, _ in test(item.values["day"], day) }
    }

    private mutating func uuidLeaf() -> OracleCondition {
        let uuid = OracleDataset.uuids.randomElement(using: &random)!
        if Bool.random(using: &random) {
            let elements = Array(OracleDataset.uuids.shuffled(using: &random).prefix(2))
            return OracleCondition(format: "uid IN %@", arguments: [elements]) { item, _ in
                (item.values["uid"] as? UUID).map(elements.contains) ?? false
            }
        }
        let equal = Bool.random(using: &random)
        return OracleCondition(format: "uid \(equal ? "==" : "!=") %@", arguments: [uuid]) { item, _ in
            ((item.values["uid"] as? UUID) == uuid) == equal
        }
    }

    /// Equality and `IN` on a value with no order (binary data, URIs).
    private mutating func identityLeaf(_ key: String) -> OracleCondition {
        let value = OracleDataset.value(key, &random)
        func same(_ left: Any?, _ right: Any) -> Bool {
            switch (left, right) {
            case let (left as Data, right as Data): return left == right
            case let (left as URL, right as URL): return left == right
            default: return false
            }
        }
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            return OracleCondition(format: "%K == %@", arguments: [key, value]) { item, _ in
                same(item.values[key], value)
            }
        case 1:
            return OracleCondition(format: "%K != %@", arguments: [key, value]) { item, _ in
                !same(item.values[key], value)
            }
        default:
            let elements = (0..<2).map { _ in OracleDataset.value(key, &random) }
            return OracleCondition(format: "%K IN %@", arguments: [key, elements]) { item, _ in
                elements.contains { same(item.values[key], $0) }
            }
        }
    }

    private mutating func nilLeaf() -> OracleCondition {
        let key = FetchOracleModel.itemAttributes.randomElement(using: &random)!.name
        let spelled = ["nil", "NIL", "NULL"].randomElement(using: &random)!
        if Bool.random(using: &random) {
            return OracleCondition(format: "%K == \(spelled)", arguments: [key]) { item, _ in item.values[key] == nil }
        }
        return OracleCondition(format: "%K != \(spelled)", arguments: [key]) { item, _ in item.values[key] != nil }
    }

    private mutating func ownerLeaf() -> OracleCondition {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return OracleCondition(format: "owner == nil", arguments: []) { item, _ in item.owner == nil }
        case 1: return OracleCondition(format: "owner != nil", arguments: []) { item, _ in item.owner != nil }
        case 2:
            let name = OracleDataset.owners.randomElement(using: &random)!.lowercased()
            return OracleCondition(format: "owner.name ==[c] %@", arguments: [name]) { item, data in
                guard let owner = item.owner, let ownerName = data.owners[owner].name else { return false }
                return ownerName.lowercased() == name
            }
        case 3:
            let rank = Int.random(in: 0...2, using: &random)
            return OracleCondition(format: "owner.rank > %d", arguments: [rank]) { item, data in
                guard let owner = item.owner, let ownerRank = data.owners[owner].rank else { return false }
                return Int(ownerRank) > rank
            }
        default:
            let serials = [Int64.random(in: 1...5, using: &random), Int64.random(in: 1...5, using: &random)]
            return OracleCondition(format: "owner.serial IN %@", arguments: [serials]) { item, data in
                guard let owner = item.owner else { return false }
                return serials.contains(data.owners[owner].serial)
            }
        }
    }

    /// A random condition on an `Owner`, through its to-many `items`.
    mutating func ownerCondition() -> OracleOwnerCondition {
        let threshold = Int64.random(in: 0...1000, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            return OracleOwnerCondition(format: "ANY items.i64 > %@", arguments: [threshold]) { owner, data in
                data.items(of: owner).contains { ($0.values["i64"] as? Int64).map { $0 > threshold } ?? false }
            }
        case 1:
            return OracleOwnerCondition(format: "ALL items.i64 >= %@", arguments: [threshold / 50]) { owner, data in
                data.items(of: owner).allSatisfy { ($0.values["i64"] as? Int64).map { $0 >= threshold / 50 } ?? false }
            }
        case 2:
            let text = OracleDataset.strings.randomElement(using: &random)!
            return OracleOwnerCondition(format: "NONE items.text ==[c] %@", arguments: [text]) { owner, data in
                !data.items(of: owner).contains {
                    ($0.values["text"] as? String).map { $0.lowercased() == text.lowercased() } ?? false
                }
            }
        case 3:
            let count = Int.random(in: 50...70, using: &random)
            return OracleOwnerCondition(format: "items.@count > %d", arguments: [count]) { owner, data in
                data.items(of: owner).count > count
            }
        case 4:
            let total = Int64.random(in: 20_000...40_000, using: &random)
            return OracleOwnerCondition(format: "items.@sum.i64 < %@", arguments: [total]) { owner, data in
                data.items(of: owner).compactMap { $0.values["i64"] as? Int64 }.reduce(0, +) < total
            }
        case 5:
            return OracleOwnerCondition(format: "items.@max.i64 > %@", arguments: [threshold]) { owner, data in
                (data.items(of: owner).compactMap { $0.values["i64"] as? Int64 }.max() ?? Int64.min) > threshold
            }
        case 6:
            let count = Int.random(in: 5...30, using: &random)
            return OracleOwnerCondition(
                format: "SUBQUERY(items, $x, $x.i64 > %@ AND $x.flag == YES).@count >= %d",
                arguments: [threshold, count]
            ) { owner, data in
                data.items(of: owner).filter { item in
                    (item.values["i64"] as? Int64).map { $0 > threshold } ?? false
                        && (item.values["flag"] as? Bool) == true
                }.count >= count
            }
        default:
            let rank = Int32.random(in: 0...2, using: &random)
            return OracleOwnerCondition(format: "rank == %@ OR name BEGINSWITH[cd] 'w'", arguments: [rank]) {
                owner, data in
                data.owners[owner].rank == rank
                    || (data.owners[owner].name.map {
                        $0.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).hasPrefix("w")
                    } ?? false)
            }
        }
    }

    /// The test of an ordering or equality operator on two optional values, Core Data's way:
    /// `nil` equals only `nil`, an ordering comparison with `nil` is false.
    static func ordering(_ op: String) -> (Any?, Any?) -> Bool {
        switch op {
        case "==", "=": return { OracleValue.equal($0, $1) }
        case "!=", "<>": return { !OracleValue.equal($0, $1) }
        default:
            return { left, right in
                guard let left, let right else { return false }
                let order = OracleValue.order(left, right)
                switch op {
                case "<": return order < 0
                case "<=", "=<": return order <= 0
                case ">": return order > 0
                default: return order >= 0
                }
            }
        }
    }
}

/// The oracle's plain value semantics.
enum OracleValue {
    static func number(_ value: Any) -> Double? {
        switch value {
        case let v as Int: return Double(v)
        case let v as Int16: return Double(v)
        case let v as Int32: return Double(v)
        case let v as Int64: return Double(v)
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    static func equal(_ left: Any?, _ right: Any?) -> Bool {
        guard let left, let right else { return left == nil && right == nil }
        return order(left, right) == 0
    }

    /// -1, 0 or 1; values of one kind only.
    static func order(_ left: Any, _ right: Any) -> Int {
        func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a > b ? 1 : 0 }
        if let a = left as? Bool, let b = right as? Bool { return sign(a ? 1 : 0, b ? 1 : 0) }
        if let a = number(left), let b = number(right) { return sign(a, b) }
        if let a = left as? String, let b = right as? String { return sign(a, b) }
        if let a = left as? Date, let b = right as? Date { return sign(a, b) }
        if let a = left as? UUID, let b = right as? UUID { return sign(a.uuidString, b.uuidString) }
        preconditionFailure("the oracle compares \(left) with \(right)")
    }

    /// The folding `[c]`, `[d]`, `[cd]` apply to both sides of a string comparison.
    static func folding(_ modifier: String) -> (String) -> String {
        { string in
            var result = string
            if modifier.contains("d") { result = result.folding(options: .diacriticInsensitive, locale: nil) }
            if modifier.contains("c") { result = result.lowercased() }
            return result
        }
    }

    /// Whether `string` matches a LIKE pattern as a whole: `*` any run, `?` one character.
    static func like(_ string: String, pattern: String) -> Bool {
        let text = Array(string), wildcard = Array(pattern)
        func match(_ t: Int, _ p: Int) -> Bool {
            guard p < wildcard.count else { return t == text.count }
            switch wildcard[p] {
            case "*": return (t...text.count).contains { match($0, p + 1) }
            case "?": return t < text.count && match(t + 1, p + 1)
            default: return t < text.count && text[t] == wildcard[p] && match(t + 1, p + 1)
            }
        }
        return match(0, 0)
    }

    /// `string` as a quoted format literal.
    static func quoted(_ string: String, single: Bool) -> String {
        let quote = single ? "'" : "\""
        return quote
            + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: quote, with: "\\" + quote)
            + quote
    }
}
