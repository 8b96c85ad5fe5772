import Foundation
import FuzzDriver
@testable import Strata

// Feeds arbitrary bytes to the predicate format parser. Whatever parses must print to a format
// that parses back to an equivalent predicate and prints the same, substitute and validate
// without crashing, and evaluate on a record; a malformed format must throw
// `FetchPredicateError`. Any crash, trap or hang is a finding.

/// Values for the format's specifiers, one of each kind the parser accepts.
nonisolated(unsafe) private let arguments: [Any] = [
    "text", 42, 2.5, NSNull(), [1, 2, 3], "name", Date(timeIntervalSinceReferenceDate: 1_000), UUID(), Set(["a", "b"]),
    "department.name", -7, true, Decimal(string: "1.5")!, "employees",
]

/// A value for every substitution variable the seeds use.
nonisolated(unsafe) private let variables: [String: Any] = ["x": 1, "NAME": "ada", "LIST": [1, "a"], "N": NSNull()]

/// A record to evaluate on: strings, numbers, a nested record, collections.
nonisolated(unsafe) private let record: [String: Any] = [
    "name": "Ada", "salary": 120, "ratio": 0.5, "tags": ["x", "y"], "scores": [1, 5, 9], "active": true,
    "department": ["name": "Research", "budget": 10.5] as [String: Any],
    "employees": [["name": "a", "salary": 1], ["name": "b", "salary": 2]] as [[String: Any]],
]

/// The entity `validate(for:)` checks key paths against.
private let employee: EntityDescription = {
    let department = EntityDescription(name: "Department")
    let employee = EntityDescription(name: "Employee")
    let employees = RelationshipDescription()
    employees.name = "employees"
    employees.maxCount = 0
    employees.destinationEntity = employee
    let worksIn = RelationshipDescription()
    worksIn.name = "department"
    worksIn.destinationEntity = department
    department.properties = [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "budget", type: .double), employees]
    employee.properties = [
        AttributeDescription(name: "name", type: .string), AttributeDescription(name: "salary", type: .integer64),
        AttributeDescription(name: "active", type: .boolean), worksIn,
    ]
    return employee
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let format = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let predicate: FetchPredicate
    do {
        predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
    } catch {
        precondition(error.offset.map { $0 >= 0 && $0 <= format.unicodeScalars.count } ?? false, "error without a valid offset: \(error)")
        return 0
    }
    let printed = predicate.predicateFormat
    let reparsed: FetchPredicate
    do {
        reparsed = try FetchPredicate(checkedFormat: printed)
    } catch {
        fatalError("\(format) printed as \(printed), which does not parse: \(error)")
    }
    precondition(reparsed.isEquivalent(to: predicate), "\(format) printed as \(printed), which parses to \(reparsed)")
    precondition(reparsed.predicateFormat == printed, "\(printed) prints as \(reparsed.predicateFormat)")
    _ = try? predicate.withSubstitutionVariables(variables).predicateFormat
    _ = try? predicate.validate(for: employee)
    _ = predicate.keyPaths
    // Fuzzed regular expressions can backtrack for long; they are ICU's, not the parser's.
    if !format.uppercased().contains("MATCHES") {
        _ = predicate.evaluate(with: record, substitutionVariables: variables)
    }
    return 0
}

/// The executable's entry point, which SwiftPM links as `main` when the sanitizers are `-Xswiftc`
/// flags (as `make fuzz` passes them): it runs libFuzzer's driver on ``fuzz(_:_:)``.
@_cdecl("PredicateFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
