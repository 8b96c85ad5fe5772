import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `FetchPredicate(format:)`: the grammar, format arguments, substitution variables, errors with
/// their offsets, validation against an entity, and printing back to a format that parses to the
/// same predicate.
@Suite struct PredicateFormatTests {
    /// The comparison a one-comparison format parses to.
    static func comparison(_ format: String, _ arguments: [Any] = []) throws -> FetchPredicate.Comparison {
        let predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
        guard case .comparison(let comparison) = predicate.node else {
            Issue.record("\(format) is not a comparison: \(predicate)")
            throw FetchPredicateError(.malformedFormat, "not a comparison")
        }
        return comparison
    }

    /// The error parsing `format` throws.
    static func failure(_ format: String, _ arguments: [Any] = []) -> FetchPredicateError? {
        do {
            let predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            Issue.record("\(format) parsed as \(predicate)")
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("a = 1", ComparisonOperator.equalTo), ("a == 1", .equalTo), ("a != 1", .notEqualTo), ("a <> 1", .notEqualTo),
        ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqualTo), ("a =< 1", .lessThanOrEqualTo), ("a > 1", .greaterThan),
        ("a >= 1", .greaterThanOrEqualTo), ("a => 1", .greaterThanOrEqualTo), ("a BETWEEN {1, 2}", .between),
        ("a IN {1, 2}", .in), ("a in {1}", .in), ("a CONTAINS 'x'", .contains), ("a BEGINSWITH 'x'", .beginsWith),
        ("a beginswith 'x'", .beginsWith), ("a ENDSWITH 'x'", .endsWith), ("a LIKE 'x*'", .like),
        ("a MATCHES 'x.'", .matches),
    ])
    func operators(format: String, expected: ComparisonOperator) throws {
        let comparison = try Self.comparison(format)
        #expect(comparison.operator == expected)
        #expect(comparison.left.keyPath == "a")
        #expect(comparison.modifier == .direct)
    }

    @Test func options() throws {
        #expect(try Self.comparison("a ==[c] 'x'").options == .caseInsensitive)
        #expect(try Self.comparison("a CONTAINS[d] 'x'").options == .diacriticInsensitive)
        #expect(try Self.comparison("a LIKE[cd] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
        #expect(try Self.comparison("a BEGINSWITH[dc] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
        #expect(try Self.comparison("a ==[n] 'x'").options == [])
        #expect(try Self.comparison("a == 'x'").options == [])
    }

    @Test func precedence() throws {
        let predicate = try FetchPredicate(checkedFormat: "a == 1 OR b == 2 AND NOT c == 3")
        #expect(predicate.compoundPredicateType == .or)
        #expect(predicate.subpredicates.count == 2)
        #expect(predicate.subpredicates[1].compoundPredicateType == .and)
        #expect(predicate.subpredicates[1].subpredicates[1].compoundPredicateType == .not)
        #expect(predicate.predicateFormat == "a == 1 OR (b == 2 AND NOT c == 3)")

        let symbols = try FetchPredicate(checkedFormat: "a == 1 && b == 2 || !(c == 3)")
        #expect(symbols.predicateFormat == "(a == 1 AND b == 2) OR NOT c == 3")
        let grouped = try FetchPredicate(checkedFormat: "a == 1 and (b == 2 or c == 3) and d == 4")
        #expect(grouped.predicateFormat == "a == 1 AND (b == 2 OR c == 3) AND d == 4")
        #expect(try FetchPredicate(checkedFormat: "TRUEPREDICATE").predicateFormat == "TRUEPREDICATE")
        #expect(
            try FetchPredicate(checkedFormat: "falsepredicate OR NOT TRUEPREDICATE").predicateFormat
                == "FALSEPREDICATE OR NOT TRUEPREDICATE")
    }

    @Test func literals() throws {
        func constant(_ literal: String) throws -> Any? {
            try Self.comparison("a == \(literal)").right.constantValue
        }
        #expect(try constant("42") as? Int == 42)
        #expect(try constant("-42") as? Int == -42)
        #expect(try constant("0x1F") as? Int == 31)
        #expect(try constant("0b101") as? Int == 5)
        #expect(try constant("0o17") as? Int == 15)
        #expect(try constant("-9223372036854775808") as? Int == Int.min)
        #expect(try constant("1.5") as? Double == 1.5)
        #expect(try constant("1.5e3") as? Double == 1500)
        #expect(try constant("-2E-2") as? Double == -0.02)
        #expect(try constant("99999999999999999999") as? Double == 1e20)
        #expect(try constant("'single'") as? String == "single")
        #expect(try constant(#""dou\"ble""#) as? String == "dou\"ble")
        #expect(try constant(#""a\\b\n\t\u00e9\x41\u{1F600}\'""#) as? String == "a\\b\n\té" + "A😀'")
        #expect(try constant("YES") as? Bool == true)
        #expect(try constant("true") as? Bool == true)
        #expect(try constant("NO") as? Bool == false)
        #expect(try constant("FALSE") as? Bool == false)
        #expect(try Self.comparison("a == nil").right.isEquivalent(to: .constant(nil)))
        #expect(try Self.comparison("a == NULL").right.isEquivalent(to: .constant(nil)))
        #expect(try constant("{1, 'b', 2.5}") as? [Any] != nil, "an aggregate of constants is an array constant")
        #expect(try constant("{}") as? [Any] != nil)
        guard case .aggregate(let elements) = try Self.comparison("a IN {1, nil, b}").right else {
            Issue.record("an aggregate with a key path stays an aggregate")
            return
        }
        #expect(elements.count == 3)
        #expect(elements[2].keyPath == "b")
        #expect(try constant(#"CAST(123.5, "NSDate")"#) as? Date == Date(timeIntervalSinceReferenceDate: 123.5))
        let uuid = UUID()
        #expect(try constant(#"CAST("\#(uuid.uuidString)", "NSUUID")"#) as? UUID == uuid)
    }

    @Test func formatArguments() throws {
        let date = Date(timeIntervalSince1970: 1_000_000)
        let uuid = UUID()
        #expect(try Self.comparison("a == %@", ["text"]).right.constantValue as? String == "text")
        #expect(try Self.comparison("a == %@", [date]).right.constantValue as? Date == date)
        #expect(try Self.comparison("a == %@", [uuid]).right.constantValue as? UUID == uuid)
        #expect(try Self.comparison("a == %@", [NSNull()]).right.isEquivalent(to: .constant(nil)))
        #expect(try Self.comparison("a == %@", [Optional<Int>.none as Any]).right.isEquivalent(to: .constant(nil)))
        #expect(try Self.comparison("a IN %@", [[1, 2, 3]]).right.isEquivalent(to: .constant([1, 2, 3])))
        #expect(try Self.comparison("%K == 1", ["department.name"]).left.keyPath == "department.name")
        #expect(try Self.comparison("%K.@count == 1", ["employees"]).left.keyPath == "employees.@count")
        let variadic = try FetchPredicate(
            checkedFormat:
                "a == %d AND b == %i AND c == %ld AND d == %lld AND e == %u AND f == %f AND g == %lf AND h == %@ AND i == %@",
            1, 2, Int64(3), 4, UInt(5), 1.5, 2.5, "s", true)
        #expect(
            variadic.predicateFormat
                == #"a == 1 AND b == 2 AND c == 3 AND d == 4 AND e == 5 AND f == 1.5 AND g == 2.5 AND h == "s" AND i == YES"#
        )
        #expect(try FetchPredicate(checkedFormat: "a > %f", 2).predicateFormat == "a > 2.0")
    }

    @Test func keyPathsAndModifiers() throws {
        #expect(try Self.comparison("department.name == 'x'").left.keyPath == "department.name")
        #expect(try Self.comparison("SELF.name == 'x'").left.isEquivalent(to: .keyPath("name")))
        #expect(try Self.comparison("SELF == %@", [1]).left.isEquivalent(to: .evaluatedObject))
        #expect(try Self.comparison("#in == 1").left.keyPath == "in")
        #expect(try Self.comparison("employees.@count > 3").left.keyPath == "employees.@count")
        #expect(try Self.comparison("employees.@sum.salary > 3").left.keyPath == "employees.@sum.salary")
        #expect(try Self.comparison("@avg.salary > 3").left.keyPath == "@avg.salary")
        #expect(try Self.comparison("5 < salary").right.keyPath == "salary")
        #expect(try Self.comparison("'x' IN tags").right.keyPath == "tags")
        #expect(try Self.comparison("ANY employees.salary > 3").modifier == .any)
        #expect(try Self.comparison("some employees.salary > 3").modifier == .any)
        #expect(try Self.comparison("ALL employees.salary > 3").modifier == .all)
        let none = try FetchPredicate(checkedFormat: "NONE employees.salary > 3")
        #expect(none.compoundPredicateType == .not)
        #expect(none.subpredicates[0].comparisonPredicateModifier == .any)

        let subquery = try Self.comparison("SUBQUERY(employees, $e, $e.salary > 10 AND $e.active == YES).@count > 0")
        guard case .keyPath("@count", on: .subquery(let collection, let variable, let inner)) = subquery.left else {
            Issue.record("not a subquery count: \(subquery.left.expressionFormat)")
            return
        }
        #expect(collection.keyPath == "employees")
        #expect(variable == "e")
        #expect(
            inner.subpredicates.first?.leftExpression?.isEquivalent(to: .keyPath("salary", on: .variable("e"))) == true)
        #expect(
            try FetchPredicate(
                checkedFormat: "SUBQUERY(employees, $e, $e.salary > 10).@count > 0 AND department.name == 'x'"
            ).keyPaths == ["employees", "department.name"])
    }

    @Test func substitutionVariables() throws {
        let template = try FetchPredicate(
            checkedFormat: "salary > $MIN AND name IN $NAMES AND SUBQUERY(e, $x, $x.a == $MIN).@count > 0")
        let filled = try template.withSubstitutionVariables(["MIN": 10, "NAMES": ["a", "b"]])
        #expect(
            filled.predicateFormat == #"salary > 10 AND name IN {"a", "b"} AND SUBQUERY(e, $x, $x.a == 10).@count > 0"#)
        #expect(throws: FetchPredicateError.self) { try template.withSubstitutionVariables(["MIN": 10]) }
        do {
            _ = try template.withSubstitutionVariables(["NAMES": []])
            Issue.record("a missing variable substituted")
        } catch {
            #expect(error.code == .missingVariable)
            #expect(error.message.contains("$MIN"))
        }
        let nilled = try FetchPredicate(checkedFormat: "notes == $N").withSubstitutionVariables(["N": NSNull()])
        #expect(nilled.predicateFormat == "notes == nil")
    }

    @Test(arguments: [
        ("", 0, FetchPredicateError.Code.malformedFormat), ("a ==", 4, .malformedFormat),
        ("a == 'abc", 5, .malformedFormat),
        ("(a == 1", 7, .malformedFormat), ("a == 1)", 6, .malformedFormat), ("a ~ 1", 2, .malformedFormat),
        ("a == %@", 5, .invalidArgument), ("a MATCHES '('", 10, .malformedFormat), ("a.@foo == 1", 2, .malformedFormat),
        ("a == 1 AND", 10, .malformedFormat), ("a BETWEEN {1}", 10, .malformedFormat), ("a == $", 5, .malformedFormat),
        ("a == 1 b == 2", 7, .malformedFormat), ("a ==[x] 1", 4, .malformedFormat), ("a == 12abc", 5, .malformedFormat),
        ("a == %s", 5, .malformedFormat), ("a.IN == 1", 2, .malformedFormat), ("a - 1 == 2", 2, .malformedFormat),
        ("a.@count.b == 1", 9, .malformedFormat), (#"a == "\u12""#, 6, .malformedFormat),
        ("a == 0xZZ", 5, .malformedFormat),
        (#"a == CAST(1, "NSFoo")"#, 13, .malformedFormat), ("SUBQUERY(a, b, b == 1).@count > 0", 12, .malformedFormat),
        ("a == 1 AND ALL", 14, .malformedFormat), ("é == 'ü' AND ü < ", 17, .malformedFormat),
    ])
    func malformedFormats(format: String, offset: Int, code: FetchPredicateError.Code) {
        guard let error = Self.failure(format) else { return }
        #expect(error.code == code, "\(error)")
        #expect(error.offset == offset, "\(error)")
        #expect(error.format == format)
    }

    @Test func argumentErrors() {
        #expect(Self.failure("%K == 1", ["not a key"])?.code == .invalidArgument)
        #expect(Self.failure("%K == 1", [3])?.offset == 0)
        #expect(Self.failure("a == %d", ["x"])?.code == .invalidArgument)
        #expect(Self.failure("a == %d", [1.5])?.code == .invalidArgument)
        #expect(Self.failure("a BETWEEN %@", [Set([1, 2])])?.offset == 10, "a set has no lower and upper bound")
        #expect(Self.failure("a BETWEEN %@", [[1, 2, 3]])?.offset == 10)
        #expect(Self.failure("a == %@ AND b == %@", [1])?.offset == 17)
        #expect(Self.failure(#"a == CAST("x", "NSUUID")"#)?.offset == 10)
    }

    @Test func nestingIsBounded() {
        let depth = 100_000
        for format in [
            String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth),
            String(repeating: "NOT ", count: depth) + "a == 1",
            String(repeating: "!", count: depth) + "a == 1",
            "a IN " + String(repeating: "{", count: depth) + String(repeating: "}", count: depth),
            String(repeating: "SUBQUERY(a, $x, ", count: depth),
        ] {
            #expect(Self.failure(format)?.code == .tooDeeplyNested)
        }
        let nested = String(repeating: "(", count: 50) + "a == 1" + String(repeating: ")", count: 50)
        #expect((try? FetchPredicate(checkedFormat: nested))?.predicateFormat == "a == 1")
    }

    /// Formats whose printed form parses back to an equivalent predicate and prints the same.
    static let roundTrips = [
        "a == 1", "a = 1 AND b != 'x' OR NOT c < 2.5", "(a == 1 OR b == 2) AND (c == 3 OR d == 4)",
        "a == 1 AND (b == 2 AND c == 3)", "NOT (a == 1 AND b == 2)", "NOT NOT a == 1",
        "TRUEPREDICATE OR FALSEPREDICATE",
        "name ==[c] 'Ada'", "name CONTAINS[cd] \"é\\\"\\\\\"", "name LIKE '*a?'", "name MATCHES '[a-z]+\\\\d'",
        "name BEGINSWITH[d] 'x' AND name ENDSWITH[c] 'y'", "salary BETWEEN {10, 20}", "salary IN {1, 2.5, -3}",
        "x IN {1, nil, y}", "{1, 2} CONTAINS x", "'tag' IN tags", "5 < salary", "ANY employees.salary > 10",
        "ALL employees.name BEGINSWITH 'a'", "NONE employees.active == NO", "employees.@count >= 2",
        "employees.@avg.salary > 1000.5", "@sum.salary < 10", "employees.@max.hired > CAST(10.25, \"NSDate\")",
        "SUBQUERY(employees, $e, $e.salary > 10 AND ($e.name == 'a' OR $e.name == 'b')).@count > 0",
        "SUBQUERY(employees, $e, SUBQUERY($e.tasks, $t, $t.done == YES).@count == 0).@count == 0",
        "SELF == $me", "SELF IN $set", "$x.name == 'a'", "#in == 1 AND #select.#AND == 2", "a == nil OR b != NULL",
        "a == YES AND b == NO", "a == -9223372036854775808", "a == 1e-300", "a == 1.7976931348623157e+308",
        "name == \"line\\nbreak\\ttab\\u0001\\u{7f}\"", "a BETWEEN $range", "a < $b AND $b < c",
        "department.name ==[cd] 'Ré' AND department.budget > 1000", "a == 'x' AND b == 'y' AND c == 'z' AND d == 'w'",
        "ANY tags ==[c] 'x'", "ALL scores BETWEEN {0, 10}",
    ]

    @Test(arguments: roundTrips) func roundTrip(format: String) throws {
        let parsed = try FetchPredicate(checkedFormat: format)
        let printed = parsed.predicateFormat
        let reparsed = try FetchPredicate(checkedFormat: printed)
        #expect(reparsed.isEquivalent(to: parsed), "\(format) printed as \(printed), which parses to \(reparsed)")
        #expect(reparsed.predicateFormat == printed)
    }

    @Test func roundTripOfConstants() throws {
        let values: [Any] = [
            Date(timeIntervalSinceReferenceDate: 12345.678901), UUID(), URL(string: "https://example.com/a?b=c")!,
            Data([0, 1, 2, 255]), Decimal(string: "12345.6789")!, Double.nan, Double.infinity, -Double.infinity,
            -0.0, 0.1, Float(0.1), Int64.max, Int16(-7), UInt8(200), true, "quote \" and \\ and \u{0} and \u{200B}",
            ["a", 1, 2.5] as [Any], Set([1, 2, 3]), "",
        ]
        for value in values {
            let predicate = try FetchPredicate(checkedFormat: "a == %@", argumentArray: [value])
            let printed = predicate.predicateFormat
            let reparsed = try FetchPredicate(checkedFormat: printed)
            #expect(reparsed.predicateFormat == printed, "\(value)")
            if let number = value as? Double, number.isNaN {
                #expect((reparsed.rightExpression?.constantValue as? Double)?.isNaN == true)
            } else {
                #expect(reparsed.isEquivalent(to: predicate), "\(value) printed as \(printed)")
            }
        }
        #expect(
            try FetchPredicate(checkedFormat: "a == %@", argumentArray: [Date(timeIntervalSinceReferenceDate: 10)])
                .predicateFormat == #"a == CAST(10.0, "NSDate")"#)
    }

    @Test func codeBuiltPredicates() throws {
        let comparison = ComparisonPredicate(
            leftExpression: FetchExpression(forKeyPath: "tags"),
            rightExpression: FetchExpression(forConstantValue: "x"),
            modifier: .any, type: .equalTo, options: .caseInsensitive)
        #expect(comparison.predicateFormat == #"ANY tags ==[c] "x""#)
        #expect(comparison.leftExpression?.keyPath == "tags")
        #expect(comparison.rightExpression?.constantValue as? String == "x")
        #expect(comparison.predicateOperatorType == .equalTo)
        #expect(comparison.comparisonPredicateModifier == .any)
        #expect(comparison.options == .caseInsensitive)
        #expect(comparison.compoundPredicateType == nil)
        let and = CompoundPredicate(andPredicateWithSubpredicates: [comparison, FetchPredicate(key: "a", .lessThan, 3)])
        #expect(and.compoundPredicateType == .and)
        #expect(and.subpredicates.count == 2)
        #expect(and.predicateFormat == #"ANY tags ==[c] "x" AND a < 3"#)
        #expect(
            CompoundPredicate(type: .not, subpredicates: [and]).predicateFormat
                == #"NOT (ANY tags ==[c] "x" AND a < 3)"#)
        #expect(CompoundPredicate(orPredicateWithSubpredicates: []).predicateFormat == "FALSEPREDICATE")
        #expect(CompoundPredicate(andPredicateWithSubpredicates: []).isEquivalent(to: FetchPredicate(value: true)))
        #expect(FetchExpression.expressionForEvaluatedObject().expressionFormat == "SELF")
        #expect(
            FetchPredicate(key: "name", .beginsWith, "b", options: .caseInsensitive).predicateFormat
                == #"name BEGINSWITH[c] "b""#)
        #expect(FetchPredicate(block: { _, _ in true }).predicateFormat == "BLOCKPREDICATE")
        #expect(
            try FetchPredicate(checkedFormat: #"a == "x""#).isEquivalent(to: FetchPredicate(key: "a", .equalTo, "x")))
        #expect(
            !(try FetchPredicate(checkedFormat: #"a == "1""#).isEquivalent(to: FetchPredicate(key: "a", .equalTo, 1))))
    }

    @Test func objectsPrintTheirURIAndParseBackAsArguments() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "Research"
            try context.save()
            let predicate = try FetchPredicate(
                checkedFormat: "department == %@ OR department IN %@",
                argumentArray: [department, [department.objectID]])
            let printed = predicate.predicateFormat
            let uri = department.objectID.uriRepresentation().absoluteString
            #expect(
                printed
                    == #"department == CAST("\#(uri)", "NSManagedObjectID") OR department IN {CAST("\#(uri)", "NSManagedObjectID")}"#
            )
            let error = Self.failure(printed)
            #expect(error?.offset == 14)
            let template = printed.replacingOccurrences(of: #"CAST("\#(uri)", "NSManagedObjectID")"#, with: "%@")
            let reparsed = try FetchPredicate(
                checkedFormat: template, argumentArray: [department.objectID, department])
            #expect(reparsed.isEquivalent(to: predicate), "objects and their IDs compare by identity")
        }
    }

    @Test func validation() throws {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!, department = model.entitiesByName["Department"]!
        for valid in [
            "salary > 1 AND department.name == 'x' AND department.employees.@count > 2", "SELF == $x", "notes == nil",
            "department.employees.@avg.salary > 10", "ANY department.employees.name == 'a'",
            "SUBQUERY(department.employees, $e, $e.department.budget > 1).@count > 0", "$x.anything == 1",
        ] {
            #expect(throws: Never.self, "\(valid)") { try FetchPredicate(checkedFormat: valid).validate(for: employee) }
        }
        #expect(throws: Never.self) {
            try FetchPredicate(checkedFormat: "ANY employees.salary > 1 AND @count > 0").validate(for: department)
        }
        for (format, entity, keyPath, offset) in [
            ("salary > 1 AND nickname == 'x'", employee, "nickname", 15),
            ("department.nam == 'x'", employee, "department.nam", 0),
            ("ANY employees.salaryy > 1", department, "employees.salaryy", 4),
            ("SUBQUERY(employees, $e, $e.sallary > 1).@count > 0", department, "sallary", 24),
            ("name.length == 1", employee, "name.length", 0),
            ("employees.@sum.wage > 1", department, "employees.@sum.wage", 0),
            ("budget > 1 OR NOT 'x' IN employees.tags", department, "employees.tags", 25),
        ] {
            do {
                try FetchPredicate(checkedFormat: format).validate(for: entity)
                Issue.record("\(format) validated")
            } catch {
                #expect(error.code == .unknownKey)
                #expect(error.keyPath == keyPath, "\(error)")
                #expect(error.offset == offset, "\(error)")
            }
        }
        #expect(throws: FetchPredicateError.self) {
            try FetchPredicate(key: "nickname", .equalTo, 1).validate(for: employee)
        }
    }
}
