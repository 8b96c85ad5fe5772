import BenchSupport
import Foundation
import Workloads

/// How the Strata engine reads and writes properties.
enum GraphAccess: String, Sendable, CaseIterable {
    /// The typed `@Managed` properties of the subclasses (the default, what apps write).
    case typed
    /// Key-value coding: `value(forKey:)` and `setValue(_:forKey:)`, to measure what `@Managed` adds.
    case kvc
}

/// How the Strata engine builds W5's predicate.
enum PredicateStyle: String, Sendable, CaseIterable {
    /// In code: `FetchPredicate(key:_:_:)` and `FetchPredicate(andPredicateWithSubpredicates:)`
    /// (the default).
    case code
    /// Parsed from a format string: `FetchPredicate(format:argumentArray:)`.
    case format
}

/// One record layer under test, driven by ``GraphRunner``: Strata's object graph (contexts and
/// typed managed objects) or GRDB records over SQLite.
///
/// The calls every engine has come from ``WorkloadEngine``: a ``WorkloadEngine/Reference`` is an
/// object ID for Strata (resolved from the URI archived by ``WorkloadEngine/didInsertAll()``), the
/// primary key for SQLite; ``WorkloadEngine/readNameAndSalary(_:)`` reads in a new context for
/// Strata; ``WorkloadEngine/employeeCount()`` goes through a count request (Strata:
/// `count(for:)`), and ``WorkloadEngine/scanNotes()`` fetches every employee.
///
/// Each call is one unit the runner times, except those documented as untimed. Not `Sendable`:
/// the runner drives an engine from one thread.
protocol GraphEngine: WorkloadEngine {
    /// Creates the engine for a store at `directory`, which does not exist yet. `access` and
    /// `predicateStyle` only concern Strata.
    init(directory: URL, durability: BenchDurability, access: GraphAccess, predicateStyle: PredicateStyle)

    /// Untimed checks: the number of employees of the first department (through the
    /// relationship), and the sum of all salaries.
    func census() throws -> (firstDepartmentEmployees: Int, salarySum: Int64)

    /// W7: fetches each employee by reference, gives it its new salary, and saves once.
    func updateSalaries(_ references: [Reference], salaries: [Int64]) throws
}
