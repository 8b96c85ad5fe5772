import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// In-memory evaluation with NSPredicate's semantics: on dictionaries, plain values (`SELF`),
/// managed objects of a store, and through the key-value hook fetches use on stored rows.
@Suite struct PredicateEvaluationTests {
    static let date = Date(timeIntervalSinceReferenceDate: 1_000)
    static let uuid = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!

    /// A record with every kind of value.
    static var record: [String: Any] {
        [
            "int": 5, "int64": Int64(9_007_199_254_740_993), "double": 2.5, "decimal": Decimal(string: "1.10")!,
            "flag": true,
            "int16": Int16(7), "float": Float(0.5), "name": "Zoë Ärger", "lower": "alice", "empty": "", "date": date,
            "uuid": uuid,
            "url": URL(string: "https://example.com")!, "data": Data([1, 2, 3]), "tags": ["x", "Y", "z"],
            "scores": [1, 5, 9],
            "noScores": [Int](), "set": Set(["a", "b"]), "optionalNil": Optional<Int>.none as Any, "null": NSNull(),
            "items": [["price": 3, "name": "pen"], ["price": 8, "name": "ink"], ["price": 12, "name": "pad"]]
                as [[String: Any]],
            "nested": ["inner": ["value": 42]] as [String: Any],
        ]
    }

    /// Cases: format, arguments, whether the record meets it.
    static var cases: [(String, [Any], Bool)] {
        [
            // Numbers across types, exactly.
            ("int == 5.0", [], true), ("int == %@", [Int64(5)], true), ("int < 5.5", [], true),
            ("int > 4.999", [], true),
            ("int64 == 9007199254740992.0", [], false), ("int64 > 9007199254740992.0", [], true),
            ("int64 == 9007199254740993", [], true),
            ("double == 2.5", [], true), ("double > %@", [Decimal(string: "2.4")!], true),
            ("decimal == %@", [Decimal(string: "1.1")!], true),
            ("decimal < 1.2", [], true), ("flag == 1", [], true), ("flag == YES", [], true), ("flag == NO", [], false),
            ("flag > 0", [], true),
            ("int16 == 7", [], true), ("float == 0.5", [], true), ("int != 6", [], true), ("int == '5'", [], false),
            ("int BETWEEN {5, 10}", [], true), ("int BETWEEN {6, 10}", [], false),
            ("double BETWEEN {1, 2.5}", [], true),
            ("5 <= int", [], true), ("6 <= int", [], false), ("int IN {1, 5.0}", [], true),
            ("int IN %@", [Set([5, 6])], true),
            // nil: missing keys, optionals, NSNull.
            ("missing == nil", [], true), ("optionalNil == nil", [], true), ("null == nil", [], true),
            ("missing != nil", [], false),
            ("int != nil", [], true), ("missing < 5", [], false), ("missing > 5", [], false), ("int > nil", [], false),
            ("missing IN {1, nil}", [], true), ("missing IN {1, 2}", [], false), ("missing BETWEEN {1, 2}", [], false),
            ("nil == missing", [], true), ("missing CONTAINS 'a'", [], false),
            // Strings with and without case and diacritics.
            ("name == 'Zoë Ärger'", [], true), ("name == 'zoë ärger'", [], false), ("name ==[c] 'ZOË ÄRGER'", [], true),
            ("name ==[c] 'Zoe Arger'", [], false), ("name ==[d] 'Zoe Arger'", [], true),
            ("name ==[cd] 'ZOE ARGER'", [], true),
            ("name !=[cd] 'zoe arger'", [], false), ("lower < 'b'", [], true), ("lower < 'B'", [], false),
            ("lower <[c] 'B'", [], true),
            ("lower IN {'ALICE', 'BOB'}", [], false), ("lower IN[c] {'ALICE', 'BOB'}", [], true),
            ("name BEGINSWITH 'Zo'", [], true), ("name BEGINSWITH[cd] 'zoe'", [], true),
            ("name ENDSWITH 'ger'", [], true),
            ("name ENDSWITH[c] 'GER'", [], true), ("name CONTAINS 'ë Ä'", [], true),
            ("name CONTAINS[cd] 'E A'", [], true),
            ("name CONTAINS ''", [], true), ("'ë' IN name", [], true), ("'q' IN name", [], false),
            ("lower LIKE 'a*e'", [], true), ("lower LIKE '?lice'", [], true), ("lower LIKE '*'", [], true),
            ("lower LIKE 'lic'", [], false),
            ("lower LIKE 'a*'", [], true), ("lower LIKE '*e*'", [], true), ("lower LIKE 'a?'", [], false),
            ("lower LIKE 'ALICE'", [], false),
            ("lower LIKE[c] 'A*'", [], true), ("name LIKE[cd] 'zoe*'", [], true), ("empty LIKE '*'", [], true),
            ("empty LIKE '?'", [], false),
            ("lower MATCHES '[a-z]+'", [], true), ("lower MATCHES 'lic'", [], false),
            ("lower MATCHES 'a|alice'", [], true),
            ("lower MATCHES '[A-Z]+'", [], false), ("lower MATCHES[c] '[A-Z]+'", [], true),
            ("name MATCHES[d] 'Zoe.*'", [], true),
            ("lower MATCHES $p", [], false), ("int LIKE '5'", [], false), ("int BEGINSWITH '5'", [], false),
            // Dates, UUIDs, URLs, data.
            ("date == %@", [date], true), ("date == CAST(1000, 'NSDate')", [], true),
            ("date > CAST(999.5, 'NSDate')", [], true),
            ("date BETWEEN %@", [[Date.distantPast, date]], true), ("date < %@", [date], false),
            ("date == 1000", [], false),
            ("uuid == %@", [uuid], true), ("uuid == %@", [UUID()], false), ("uuid IN %@", [[UUID(), uuid]], true),
            ("uuid == %@", [uuid.uuidString], false), ("url == %@", [URL(string: "https://example.com")!], true),
            ("data == %@", [Data([1, 2, 3])], true), ("data < %@", [Data([1, 2, 4])], true),
            // Collections: CONTAINS, IN, ANY, ALL, NONE, operators, subqueries.
            ("tags CONTAINS 'x'", [], true), ("tags CONTAINS 'y'", [], false), ("tags CONTAINS[c] 'y'", [], true),
            ("'z' IN tags", [], true),
            ("set CONTAINS 'b'", [], true), ("'c' IN set", [], false), ("tags == {'x', 'Y', 'z'}", [], true),
            ("tags == {'Y', 'x', 'z'}", [], false),
            ("set == %@", [["b", "a"]], true),
            ("ANY scores > 8", [], true), ("ANY scores > 9", [], false), ("SOME scores == 5", [], true),
            ("ALL scores > 0", [], true),
            ("ALL scores > 1", [], false), ("NONE scores > 9", [], true), ("NONE scores > 8", [], false),
            ("ALL noScores > 100", [], true),
            ("ANY noScores > 0", [], false), ("ANY tags ==[c] 'y'", [], true), ("ALL tags LIKE '?'", [], true),
            ("ANY scores BETWEEN {2, 6}", [], true), ("ANY scores IN {7, 9}", [], true),
            ("ANY missing == 1", [], false),
            ("scores.@count == 3", [], true), ("scores.@sum == 15", [], true), ("scores.@avg == 5", [], true),
            ("scores.@min == 1", [], true),
            ("scores.@max == 9", [], true), ("noScores.@count == 0", [], true), ("noScores.@sum == 0", [], true),
            ("noScores.@avg == nil", [], true),
            ("noScores.@max == nil", [], true), ("tags.@max == 'z'", [], true), ("tags.@min == 'Y'", [], true),
            ("items.@count == 3", [], true), ("items.@sum.price == 23", [], true),
            ("items.@avg.price > 7.66", [], true),
            ("items.@max.price == 12", [], true), ("items.@min.name == 'ink'", [], true),
            ("ANY items.price > 10", [], true),
            ("ALL items.price > 2", [], true), ("ANY items.name == 'pad'", [], true),
            ("items.name CONTAINS 'pen'", [], true),
            ("SUBQUERY(items, $i, $i.price > 5).@count == 2", [], true),
            ("SUBQUERY(items, $i, $i.price > 5 AND $i.name BEGINSWITH 'p').@count == 1", [], true),
            ("SUBQUERY(items, $i, $i.price > 100).@count == 0", [], true),
            ("SUBQUERY(scores, $s, $s > 4).@sum == 14", [], true),
            ("SUBQUERY(items, $i, SELF.price == 3).@count == 1", [], true),
            ("SUBQUERY(missing, $i, $i == 1).@count == 0", [], true),
            ("nested.inner.value == 42", [], true), ("nested.inner.missing == nil", [], true),
            ("int.foo == 1", [], false),
            ("NOT int.foo == 1", [], true), ("name.@count == 1", [], false),
            // Compounds and constants.
            ("int == 5 AND (flag == NO OR double == 2.5)", [], true), ("NOT (int == 5 AND flag == YES)", [], false),
            ("TRUEPREDICATE", [], true), ("FALSEPREDICATE OR int == 5", [], true),
            ("%K == %@", ["name", "Zoë Ärger"], true),
            ("{1, 2} CONTAINS 2", [], true), ("1 == 1", [], true), ("'a' < 'b'", [], true),
        ]
    }

    @Test(arguments: cases.indices) func onDictionaries(index: Int) throws {
        let (format, arguments, expected) = Self.cases[index]
        let predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
        #expect(predicate.evaluate(with: Self.record) == expected, "\(format)")
        let reparsed = try FetchPredicate(checkedFormat: predicate.predicateFormat)
        #expect(reparsed.evaluate(with: Self.record) == expected, "\(format) printed as \(predicate.predicateFormat)")
    }

    @Test func onPlainValues() throws {
        #expect(try FetchPredicate(checkedFormat: "SELF > 3").evaluate(with: 5))
        #expect(!FetchPredicate(format: "SELF > 3").evaluate(with: 2))
        #expect(try FetchPredicate(checkedFormat: "SELF IN {1, 2}").evaluate(with: 2.0))
        #expect(try FetchPredicate(checkedFormat: "SELF BEGINSWITH[c] 'a'").evaluate(with: "Ada"))
        #expect(try FetchPredicate(checkedFormat: "SELF == nil").evaluate(with: nil))
        #expect(try FetchPredicate(checkedFormat: "@count == 3 AND @sum == 6 AND @max == 3").evaluate(with: [1, 2, 3]))
        #expect(try FetchPredicate(checkedFormat: "ANY SELF == 'b'").evaluate(with: Set(["a", "b"])))
        #expect(try FetchPredicate(checkedFormat: "SELF.@avg == 2").evaluate(with: [1, 2, 3]))
        #expect(
            !FetchPredicate(format: "name == 'x'").evaluate(with: 3),
            "a value without keys meets no comparison on a key")
    }

    @Test func substitutionVariables() throws {
        let predicate = try FetchPredicate(checkedFormat: "int > $MIN AND lower IN $NAMES")
        #expect(predicate.evaluate(with: Self.record, substitutionVariables: ["MIN": 4, "NAMES": ["alice"]]))
        #expect(!predicate.evaluate(with: Self.record, substitutionVariables: ["MIN": 5, "NAMES": ["alice"]]))
        #expect(!predicate.evaluate(with: Self.record), "an unbound variable makes its comparison false")
        #expect(try FetchPredicate(checkedFormat: "NOT int > $MIN").evaluate(with: Self.record))
        #expect(
            try FetchPredicate(checkedFormat: "lower MATCHES $P").evaluate(
                with: Self.record, substitutionVariables: ["P": "a.*"]))
        #expect(
            !FetchPredicate(format: "lower MATCHES $P").evaluate(with: Self.record, substitutionVariables: ["P": "(a"]),
            "a bad pattern matches nothing")
        #expect(
            try FetchPredicate(checkedFormat: "missing == $V").evaluate(
                with: Self.record, substitutionVariables: ["V": NSNull()]))
        let filled = try predicate.withSubstitutionVariables(["MIN": 4, "NAMES": Set(["alice", "bob"])])
        #expect(filled.evaluate(with: Self.record))
    }

    @Test func blockPredicates() throws {
        let block = FetchPredicate { object, variables in
            (object as? [String: Any])?["int"] as? Int == variables?["want"] as? Int
        }
        #expect(block.evaluate(with: Self.record, substitutionVariables: ["want": 5]))
        #expect(!block.evaluate(with: Self.record, substitutionVariables: ["want": 6]))
        let combined = FetchPredicate(andPredicateWithSubpredicates: [
            try FetchPredicate(checkedFormat: "flag == YES"), block,
        ])
        #expect(combined.evaluate(with: Self.record, substitutionVariables: ["want": 5]))
    }

    @Test func keyValueHook() throws {
        // Stored rows as the fetch code sees them: a row is a dictionary of columns, a to-one is
        // an ID string, resolved through `rows`.
        let rows: [String: [String: Any]] = [
            "d1": ["name": "Research", "staff": ["e1", "e2"]],
            "e1": ["name": "ada", "salary": 10, "department": "d1"],
            "e2": ["name": "bob", "salary": 30, "department": "d1"],
        ]
        struct Unreadable: Error {}
        var reads: [String] = []
        func evaluate(_ format: String, on id: String) throws -> Bool {
            try FetchPredicate(checkedFormat: format).evaluate(with: id) { object, key in
                guard let id = object as? String, let row = rows[id], row.keys.contains(key) else { throw Unreadable() }
                reads.append("\(id).\(key)")
                return row[key]
            }
        }
        #expect(try evaluate("department.name == 'Research'", on: "e1"))
        #expect(reads == ["e1.department", "d1.name"])
        #expect(try evaluate("staff.@count == 2 AND staff.@sum.salary == 40 AND ANY staff.name == 'bob'", on: "d1"))
        #expect(try evaluate("SUBQUERY(staff, $e, $e.salary > 20).@count == 1", on: "d1"))
        #expect(try evaluate("SELF == 'e2' AND salary > 20", on: "e2"))
        #expect(try !evaluate("nickname == nil", on: "e2"), "a key the hook cannot read makes the comparison false")
        let values: [String: Any] = ["department.name": "Research", "staff": [["salary": 10], ["salary": 30]]]
        #expect(FetchExpression(forKeyPath: "staff.@max.salary").expressionValue(with: values) as? Int == 30)
        #expect(
            FetchExpression(forKeyPath: "department.name").expressionValue(with: values) == nil,
            "a dotted key is not a path")
        #expect(FetchExpression(forKeyPath: "@count").expressionValue(with: [1, 2]) as? Int == 2)
        let predicate = try FetchPredicate(
            checkedFormat:
                "department.name == 'x' AND (ANY staff.salary > 1 OR SUBQUERY(reports, $r, $r.x == 1).@count > 0) AND SELF == $me"
        )
        #expect(predicate.keyPaths == ["department.name", "staff.salary", "reports"])
    }

    @Test func onManagedObjects() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try FetchRuleTests.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = context.object(with: ids["Research"]!) as! Department
            let sales = context.object(with: ids["Sales"]!) as! Department
            let alice = context.object(with: ids["alice"]!) as! Employee
            let erin = context.object(with: ids["erin"]!) as! Employee
            let employees: [(FetchPredicate, Employee, Bool)] = [
                (try FetchPredicate(checkedFormat: "department.name == 'Research'"), alice, true),
                (try FetchPredicate(checkedFormat: "department == %@", argumentArray: [research]), alice, true),
                (
                    try FetchPredicate(checkedFormat: "department == %@", argumentArray: [research.objectID]), alice,
                    true
                ),
                (
                    try FetchPredicate(checkedFormat: "department IN %@", argumentArray: [Set([sales, research])]),
                    alice, true
                ),
                (
                    try FetchPredicate(checkedFormat: "department IN %@", argumentArray: [[sales.objectID]]), alice,
                    false
                ),
                (try FetchPredicate(checkedFormat: "department == nil"), erin, true),
                (try FetchPredicate(checkedFormat: "department.name == nil"), erin, true),
                (try FetchPredicate(checkedFormat: "department.employees.@count == 2"), alice, true),
                (try FetchPredicate(checkedFormat: "SELF == %@", argumentArray: [alice.objectID]), alice, true),
                (try FetchPredicate(checkedFormat: "SELF IN %@", argumentArray: [[erin]]), alice, false),
                (try FetchPredicate(checkedFormat: "notes == nil AND salary > 40000.5 AND active == 1"), alice, true),
                (try FetchPredicate(checkedFormat: "name LIKE[c] 'AL*' AND name MATCHES 'a.*'"), alice, true),
                (try FetchPredicate(checkedFormat: "nickname == nil"), alice, false),
            ]
            for (predicate, employee, expected) in employees {
                #expect(predicate.evaluate(with: employee) == expected, "\(predicate)")
            }
            let departments: [(String, Bool)] = [
                ("ANY employees.salary > 60000", true), ("ALL employees.salary > 60000", false),
                ("NONE employees.active == NO", false),
                ("employees.@count == 2", true), ("employees.@sum.salary == 120000", true),
                ("employees.@avg.salary == 60000", true),
                ("employees.@max.salary == 70000", true),
                ("SUBQUERY(employees, $e, $e.active == YES).@count == 1", true),
                ("ANY employees == %@", true), ("%@ IN employees", true), ("employees CONTAINS %@", true),
                ("ANY employees.department.name == 'Research'", true),
            ]
            for (format, expected) in departments {
                let predicate = try FetchPredicate(
                    checkedFormat: format, argumentArray: format.contains("%@") ? [alice] : [])
                #expect(predicate.evaluate(with: research) == expected, "\(format)")
            }
            #expect(try FetchPredicate(checkedFormat: "ALL employees.salary > 60000").evaluate(with: sales))
            #expect(try FetchPredicate.value(atKeyPath: "employees.@count", of: research) as? Int == 2)
            #expect(try FetchPredicate.value(atKeyPath: "department.name", of: alice) as? String == "Research")
        }
    }

    @Test(arguments: [false, true]) func fetchesWithFormats(inMemory: Bool) throws {
        let folder = TemporaryDirectory()
        let (container, _) = try FetchRuleTests.seeded(folder)
        let warm = container.newBackgroundContext()
        try warm.performAndWait {
            warm.retainsRegisteredObjects = true
            for employee in try warm.fetch(FetchRuleTests.request()) { _ = employee.department?.name }
        }
        func names(_ format: String, _ arguments: Any...) throws -> [String] {
            let context = inMemory ? warm : container.newBackgroundContext()
            let predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            return try context.performAndWait {
                try FetchRuleTests.names(FetchRuleTests.request(predicate), in: context)
            }
        }
        #expect(try names("salary > %d AND active == YES", 60_000) == ["carol", "Dave"])
        #expect(try names("department.name ==[c] %@", "research") == ["alice", "Bob"])
        #expect(try names("name IN[c] {'ALICE', 'dave'} OR notes == 'new'") == ["alice", "Dave", "erin"])
        #expect(try names("NOT name LIKE[c] '*a*' AND salary BETWEEN {60000, 200000}") == ["Bob", "erin"])
        #expect(try names("notes != nil AND NOT notes BEGINSWITH 'r'") == ["carol", "erin"])
        #expect(try names("department == nil OR salary < 60000") == ["alice", "erin"])
        #expect(try names("department.employees.@count == 2 AND salary >= 90000") == ["carol", "Dave"])
    }
}
