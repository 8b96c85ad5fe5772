import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A subclass with a renamed property and several Booleans, for key path names only (no model
/// needs it: `@Managed` declares the names).
final class Badge: ManagedObject {
    @Managed("title") var label: String
    @Managed var level: Int16
    @Managed var issued: Bool
    @Managed var revoked: Bool
    @Managed var expired: Bool
    @Managed var holder: Employee?
}

/// A subclass with every other attribute type and both kinds of to-many relationship.
final class Gadget: ManagedObject {
    @Managed var made: Date
    @Managed var serial: UUID
    @Managed var manual: URL?
    @Managed var firmware: Data
    @Managed var price: Decimal
    @Managed var weight: Float
    @Managed var parts: Int32
    @Managed var rating: Double?
    @Managed var testers: Set<Employee>
    @Managed var owners: [Employee]
}

extension Employee {
    /// A read-only computed property: no model key path.
    var doubledSalary: Int64 { salary * 2 }
    /// A settable computed alias of `salary`: not a `@Managed` property, so no model key path.
    var pay: Int64 {
        get { salary }
        set { salary = newValue }
    }
    /// Settable computed properties that transform what they read: no model key path.
    var lowercasedName: String {
        get { name.lowercased() }
        set { name = newValue }
    }
    var raisedSalary: Int64 {
        get { salary + 7 }
        set { salary = newValue - 7 }
    }
}

/// Foundation `#Predicate` and `SortDescriptor` on typed subclasses, translated to key-based
/// predicates and sort descriptors (planned on indexes) with in-memory evaluation of the rest.
@Suite struct FoundationPredicateTests {
    // MARK: Key path names

    @Test func keyPathsOfManagedPropertiesNameModelProperties() {
        #expect(ManagedKeyPathNames.name(of: \Employee.salary) == "salary")
        #expect(ManagedKeyPathNames.name(of: \Employee.name) == "name")
        #expect(ManagedKeyPathNames.name(of: \Employee.notes) == "notes")
        #expect(ManagedKeyPathNames.name(of: \Employee.active) == "active")
        #expect(ManagedKeyPathNames.name(of: \Employee.department) == "department")
        #expect(ManagedKeyPathNames.name(of: \Department.employees) == "employees")
        #expect(ManagedKeyPathNames.name(of: \Department.budget) == "budget")
        #expect(ManagedKeyPathNames.name(of: \Employee.department?.name) == "department.name")
        #expect(ManagedKeyPathNames.name(of: \Employee.department?.budget) == "department.budget")
    }

    @Test func renamedPropertiesAndBooleansAreToldApart() {
        #expect(ManagedKeyPathNames.name(of: \Badge.label) == "title")
        #expect(ManagedKeyPathNames.name(of: \Badge.level) == "level")
        #expect(ManagedKeyPathNames.name(of: \Badge.issued) == "issued")
        #expect(ManagedKeyPathNames.name(of: \Badge.revoked) == "revoked")
        #expect(ManagedKeyPathNames.name(of: \Badge.expired) == "expired")
        #expect(ManagedKeyPathNames.name(of: \Badge.holder?.department?.name) == "holder.department.name")
    }

    @Test func everyAttributeTypeIsNamed() {
        #expect(ManagedKeyPathNames.name(of: \Gadget.made) == "made")
        #expect(ManagedKeyPathNames.name(of: \Gadget.serial) == "serial")
        #expect(ManagedKeyPathNames.name(of: \Gadget.manual) == "manual")
        #expect(ManagedKeyPathNames.name(of: \Gadget.firmware) == "firmware")
        #expect(ManagedKeyPathNames.name(of: \Gadget.price) == "price")
        #expect(ManagedKeyPathNames.name(of: \Gadget.weight) == "weight")
        #expect(ManagedKeyPathNames.name(of: \Gadget.parts) == "parts")
        #expect(ManagedKeyPathNames.name(of: \Gadget.rating) == "rating")
        #expect(ManagedKeyPathNames.name(of: \Gadget.testers) == "testers")
        #expect(ManagedKeyPathNames.name(of: \Gadget.owners) == "owners")
        let day = Date(timeIntervalSinceReferenceDate: 86_400)
        let serial = UUID()
        let made = FetchPredicate(#Predicate<Gadget> { $0.made < day && $0.serial == serial })
        #expect(Self.structure(made) == "(made < \(day) AND serial == \(serial))")
        let price = FetchPredicate(#Predicate<Gadget> { $0.price >= 2.5 && $0.rating == nil })
        #expect(Self.structure(price) == "(price >= 2.5 AND rating == nil)")
        #expect(Self.structure(FetchPredicate(#Predicate<Gadget> { $0.owners.count > 1 })) == "owners.@count > 1")
    }

    @Test func computedPropertiesHaveNoName() {
        #expect(ManagedKeyPathNames.name(of: \Employee.doubledSalary) == nil)
        #expect(ManagedKeyPathNames.name(of: \Employee.pay) == nil, "a computed alias is not a model property")
        #expect(ManagedKeyPathNames.name(of: \Employee.lowercasedName) == nil)
        #expect(ManagedKeyPathNames.name(of: \Employee.raisedSalary) == nil)
        #expect(ManagedKeyPathNames.name(of: \Employee.objectID) == nil)
        #expect(ManagedKeyPathNames.name(of: \Employee.name.count) == nil)
    }

    // MARK: Translated structure

    static let employeeCases: [(Predicate<Employee>, String)] = {
        var cases: [(Predicate<Employee>, String)] = []
        cases.append((#Predicate<Employee> { $0.salary > 100 }, "salary > 100"))
        cases.append((#Predicate<Employee> { 100 < $0.salary }, "salary > 100"))
        cases.append((#Predicate<Employee> { $0.salary <= 5 }, "salary <= 5"))
        cases.append((#Predicate<Employee> { $0.name == "Ada" }, "name == \"Ada\""))
        cases.append((#Predicate<Employee> { $0.name != "Ada" }, "name != \"Ada\""))
        cases.append(
            (
                #Predicate<Employee> { $0.salary >= 10 && $0.name.starts(with: "A") },
                "(salary >= 10 AND name BEGINSWITH \"A\")"
            ))
        cases.append(
            (
                #Predicate<Employee> { $0.name.contains("da") || !$0.active },
                "(name CONTAINS \"da\" OR NOT (active == true))"
            ))
        cases.append((#Predicate<Employee> { $0.active }, "active == true"))
        cases.append((#Predicate<Employee> { (10...20).contains($0.salary) }, "salary BETWEEN {10, 20}"))
        cases.append((#Predicate<Employee> { (10..<20).contains($0.salary) }, "(salary >= 10 AND salary < 20)"))
        cases.append((#Predicate<Employee> { [1, 2].contains($0.salary) }, "salary IN {1, 2}"))
        cases.append((#Predicate<Employee> { $0.department?.name == "R&D" }, "department.name == \"R&D\""))
        cases.append((#Predicate<Employee> { $0.department!.budget > 5 }, "department.budget > 5.0"))
        cases.append((#Predicate<Employee> { $0.department == nil }, "department == nil"))
        cases.append((#Predicate<Employee> { $0.notes == nil }, "notes == nil"))
        cases.append((#Predicate<Employee> { ($0.notes ?? "") == "" }, "(notes == \"\" OR notes == nil)"))
        cases.append((#Predicate<Employee> { ($0.notes ?? "x") == "y" }, "(notes != nil AND notes == \"y\")"))
        cases.append(
            (
                #Predicate<Employee> { ($0.department?.budget ?? 0) > 5 },
                "(department.budget != nil AND department.budget > 5.0)"
            ))
        cases.append((#Predicate<Employee> { $0.pay == 7 }, "BLOCK"))
        cases.append((#Predicate<Employee> { $0.salary * 2 > 100 }, "BLOCK"))
        cases.append((#Predicate<Employee> { $0.doubledSalary > 100 }, "BLOCK"))
        cases.append((#Predicate<Employee> { $0.salary > 10 && $0.salary % 2 == 0 }, "(salary > 10 AND BLOCK)"))
        cases.append((#Predicate<Employee> { $0.name.count > 3 || $0.salary == 1 }, "(BLOCK OR salary == 1)"))
        cases.append((#Predicate<Employee> { $0.salary > 10 && !($0.salary % 3 == 0) }, "(salary > 10 AND BLOCK)"))
        cases.append((#Predicate<Employee> { _ in true }, "TRUEPREDICATE"))
        cases.append((#Predicate<Employee> { $0.name.isEmpty }, "name == \"\""))
        return cases
    }()

    @Test(arguments: employeeCases)
    func employeePredicatesTranslate(_ predicate: Predicate<Employee>, _ expected: String) {
        #expect(Self.structure(FetchPredicate(predicate)) == expected)
    }

    static let departmentCases: [(Predicate<Department>, String)] = {
        var cases: [(Predicate<Department>, String)] = []
        cases.append((#Predicate<Department> { $0.employees.count > 2 }, "employees.@count > 2"))
        cases.append((#Predicate<Department> { $0.employees.isEmpty }, "employees.@count == 0"))
        cases.append((#Predicate<Department> { $0.employees.contains { $0.salary > 5 } }, "ANY employees.salary > 5"))
        cases.append(
            (
                #Predicate<Department> { $0.employees.contains { $0.salary > 5 && $0.active } },
                "SUBQUERY(employees, $x1, ($x1.salary > 5 AND $x1.active == true)).@count > 0"
            ))
        cases.append(
            (
                #Predicate<Department> { $0.employees.allSatisfy { $0.active } },
                "SUBQUERY(employees, $x1, NOT ($x1.active == true)).@count == 0"
            ))
        cases.append((#Predicate<Department> { $0.employees.contains { $0.salary * 2 > 5 } }, "BLOCK"))
        cases.append(
            (
                #Predicate<Department> { $0.budget > 1 && $0.employees.contains { $0.salary % 2 == 1 } },
                "(budget > 1.0 AND BLOCK)"
            ))
        return cases
    }()

    @Test(arguments: departmentCases)
    func departmentPredicatesTranslate(_ predicate: Predicate<Department>, _ expected: String) {
        #expect(Self.structure(FetchPredicate(predicate)) == expected)
    }

    @Test func capturedValuesBecomeConstants() {
        let minimum: Int64? = 10
        #expect(Self.structure(FetchPredicate(#Predicate<Employee> { $0.salary > minimum! })) == "salary > 10")
        let range: ClosedRange<Int64> = 3...4
        #expect(
            Self.structure(FetchPredicate(#Predicate<Employee> { range.contains($0.salary) }))
                == "salary BETWEEN {3, 4}")
        let names = ["Ada", "Grace"]
        #expect(
            Self.structure(FetchPredicate(#Predicate<Employee> { names.contains($0.name) }))
                == "name IN {\"Ada\", \"Grace\"}")
        let missing: String? = nil
        #expect(Self.structure(FetchPredicate(#Predicate<Employee> { $0.notes == missing })) == "notes == nil")
    }

    // MARK: Fetching through a store

    /// Six employees in two departments (and one in none), saved and reopened.
    private static func seededContainer(_ folder: TemporaryDirectory) throws -> PersistentContainer {
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let research = Department(context: context)
                research.name = "R&D"
                research.budget = 10
                let sales = Department(context: context)
                sales.name = "Sales"
                sales.budget = 2
                let rows: [(String, Int64, Bool, String?, Department?)] = [
                    ("Ada", 120, true, "lead", research), ("Grace", 95, true, nil, research),
                    ("Alan", 80, false, "", research),
                    ("Edsger", 60, true, "notes", sales), ("Barbara", 150, false, nil, sales),
                    ("Ken", 40, true, "k", nil),
                ]
                for (name, salary, active, notes, department) in rows {
                    let employee = Employee(context: context)
                    employee.name = name
                    employee.salary = salary
                    employee.active = active
                    employee.notes = notes
                    employee.department = department
                }
                try context.save()
            }
            try container.close()
        }
        return try GraphModel.container(at: folder.store())
    }

    static let fetchCases: [Predicate<Employee>] = {
        var cases: [Predicate<Employee>] = []
        cases.append(#Predicate<Employee> { $0.salary > 90 })
        cases.append(#Predicate<Employee> { $0.salary >= 60 && $0.name.starts(with: "A") })
        cases.append(#Predicate<Employee> { (60...120).contains($0.salary) })
        cases.append(#Predicate<Employee> { (60..<120).contains($0.salary) })
        cases.append(#Predicate<Employee> { [40, 95].contains($0.salary) || !$0.active })
        cases.append(#Predicate<Employee> { $0.department?.name == "R&D" })
        cases.append(#Predicate<Employee> { $0.department == nil })
        cases.append(#Predicate<Employee> { ($0.notes ?? "") == "" })
        cases.append(#Predicate<Employee> { $0.name.contains("a") })
        cases.append(#Predicate<Employee> { $0.salary > 50 && $0.salary % 20 == 0 })
        cases.append(#Predicate<Employee> { $0.doubledSalary > 200 })
        cases.append(#Predicate<Employee> { $0.salary < 70 || $0.name.count == 5 })
        cases.append(#Predicate<Employee> { $0.notes != "lead" })
        cases.append(#Predicate<Employee> { $0.department?.name != "R&D" })
        cases.append(#Predicate<Employee> { $0.name.isEmpty || $0.notes?.isEmpty == true })
        return cases
    }()

    /// Each predicate fetches exactly the objects Foundation's own evaluation accepts.
    @Test(arguments: fetchCases)
    func fetchMatchesFoundationEvaluation(_ predicate: Predicate<Employee>) throws {
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let all = try context.fetch(Employee.fetchRequest())
            #expect(all.count == 6)
            let expected = Set(try all.filter { try predicate.evaluate($0) }.map(\.name))
            let translated = FetchPredicate(predicate)
            #expect(Set(all.filter { translated.evaluate(with: $0) }.map(\.name)) == expected, "in memory")
            let request = Employee.fetchRequest()
            request.predicate = translated
            #expect(Set(try context.fetch(request).map(\.name)) == expected, "\(Self.structure(request.predicate!))")
            #expect(try context.count(for: request) == expected.count)
        }
    }

    static let formatCases: [(Predicate<Employee>, String)] = {
        var cases: [(Predicate<Employee>, String)] = []
        cases.append((#Predicate<Employee> { $0.salary > 90 }, "salary > 90"))
        cases.append((#Predicate<Employee> { (60...120).contains($0.salary) }, "salary BETWEEN {60, 120}"))
        cases.append(
            (
                #Predicate<Employee> { $0.salary >= 60 && $0.name.starts(with: "A") },
                "salary >= 60 AND name BEGINSWITH 'A'"
            ))
        cases.append(
            (
                #Predicate<Employee> { [40, 95].contains($0.salary) || !$0.active },
                "salary IN {40, 95} OR NOT active == YES"
            ))
        cases.append((#Predicate<Employee> { $0.department?.name == "R&D" }, "department.name == 'R&D'"))
        cases.append((#Predicate<Employee> { ($0.notes ?? "") == "" }, "notes == '' OR notes == nil"))
        cases.append((#Predicate<Employee> { $0.department?.employees.count == 3 }, "department.employees.@count == 3"))
        return cases
    }()

    /// A translated predicate is the predicate its format parses to (so it is planned alike), and
    /// fetches the same objects.
    @Test(arguments: formatCases)
    func translatedPredicatesEqualFormatPredicates(_ predicate: Predicate<Employee>, _ format: String) throws {
        let parsed = try FetchPredicate(checkedFormat: format)
        let translated = FetchPredicate(predicate)
        #expect(translated.predicateFormat == parsed.predicateFormat)
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let byFormat = Employee.fetchRequest()
            byFormat.predicate = parsed
            let byFoundation = Employee.fetchRequest()
            byFoundation.predicate = translated
            let expected = Set(try context.fetch(byFormat).map(\.name))
            #expect(!expected.isEmpty)
            #expect(Set(try context.fetch(byFoundation).map(\.name)) == expected)
        }
    }

    /// A fresh context (nothing registered) fetches from the rows, then with a pending change.
    @Test func fetchFromRowsAndPendingChanges() throws {
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(#Predicate<Employee> { $0.salary > 90 && $0.salary % 2 == 0 })
            #expect(Set(try context.fetch(request).map(\.name)) == ["Ada", "Barbara"])
            let equivalent = Employee.fetchRequest()
            equivalent.predicate = FetchPredicate(andPredicateWithSubpredicates: [
                FetchPredicate(key: "salary", .greaterThan, 90),
                FetchPredicate(.block { object, _ in ((object as? Employee)?.salary ?? 1) % 2 == 0 }),
            ])
            #expect(Set(try context.fetch(equivalent).map(\.name)) == ["Ada", "Barbara"])
            let ken = try #require(try context.fetch(Employee.fetchRequest()).first { $0.name == "Ken" })
            ken.salary = 200
            #expect(Set(try context.fetch(request).map(\.name)) == ["Ada", "Barbara", "Ken"])
            let newcomer = Employee(context: context)
            newcomer.name = "Niklaus"
            newcomer.salary = 97
            #expect(Set(try context.fetch(request).map(\.name)) == ["Ada", "Barbara", "Ken"], "97 is odd")
            newcomer.salary = 98
            #expect(Set(try context.fetch(request).map(\.name)) == ["Ada", "Barbara", "Ken", "Niklaus"])
        }
    }

    @Test func departmentPredicatesOverToManyRelationships() throws {
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let cases: [Predicate<Department>] = [
                #Predicate<Department> { $0.employees.count > 2 },
                #Predicate<Department> { $0.employees.contains { $0.salary > 130 } },
                #Predicate<Department> { $0.employees.contains { $0.salary > 100 && $0.active } },
                #Predicate<Department> { $0.employees.allSatisfy { $0.active } },
                #Predicate<Department> { $0.budget > 1 && $0.employees.contains { $0.salary % 2 == 1 } },
            ]
            let all = try context.fetch(Department.fetchRequest())
            for predicate in cases {
                let expected = Set(try all.filter { try predicate.evaluate($0) }.map(\.name))
                let request = Department.fetchRequest()
                request.predicate = FetchPredicate(predicate)
                #expect(
                    Set(try context.fetch(request).map(\.name)) == expected, "\(Self.structure(request.predicate!))")
            }
        }
    }

    /// Translated predicates are planned as the equivalent code-built ones: on the salary index.
    @Test func translatedPredicatesUseTheFetchIndexes() throws {
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let translated = Employee.fetchRequest()
            translated.predicate = FetchPredicate(#Predicate<Employee> { $0.salary > 90 && $0.name.starts(with: "A") })
            let built = Employee.fetchRequest()
            built.predicate = FetchPredicate(andPredicateWithSubpredicates: [
                FetchPredicate(key: "salary", .greaterThan, Int64(90)), FetchPredicate(key: "name", .beginsWith, "A"),
            ])
            let plan = try context.explain(translated)
            #expect(plan == (try context.explain(built)))
            guard case .index = plan.access else {
                Issue.record("not planned on the index: \(plan)")
                return
            }
            #expect(try context.fetch(translated).map(\.name) == ["Ada"])

            let partly = Employee.fetchRequest()
            partly.predicate = FetchPredicate(#Predicate<Employee> { $0.salary > 90 && $0.salary % 2 == 0 })
            let partlyPlan = try context.explain(partly)
            guard case .index = partlyPlan.access else {
                Issue.record("the translatable part is not planned on the index: \(partlyPlan)")
                return
            }
        }
    }

    // MARK: Sort descriptors

    @Test func sortDescriptorsTranslate() throws {
        let bySalary = try #require(FetchSortDescriptor(SortDescriptor(\Employee.salary, order: .reverse)))
        #expect(bySalary.key == "salary")
        #expect(!bySalary.ascending)
        #expect(bySalary.comparison == .compare)
        let byName = try #require(FetchSortDescriptor(SortDescriptor(\Employee.name, comparator: .lexical)))
        #expect(byName.key == "name" && byName.ascending && byName.comparison == .compare)
        let byDepartment = try #require(FetchSortDescriptor(SortDescriptor(\Employee.department?.name)))
        #expect(byDepartment.key == "department.name")
        let byNotes = try #require(
            FetchSortDescriptor(SortDescriptor(\Employee.notes, comparator: .lexical, order: .reverse)))
        #expect(byNotes.key == "notes" && !byNotes.ascending)
        #expect(FetchSortDescriptor(SortDescriptor(\Employee.doubledSalary)) == nil)
    }

    @Test func stringComparatorsBecomeComparisons() {
        #expect(FetchSortDescriptor.comparison(String.Comparator(.lexical)) == .compare)
        #expect(
            FetchSortDescriptor.comparison(String.Comparator(options: [.caseInsensitive])) == .caseInsensitiveCompare)
        #expect(FetchSortDescriptor.comparison(String.Comparator(options: [.numeric])) == .localizedStandardCompare)
    }

    @Test func fetchRequestWithPredicateAndSortDescriptors() throws {
        let folder = TemporaryDirectory()
        let container = try Self.seededContainer(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = try FetchRequest<Employee>(
                predicate: #Predicate { $0.salary >= 60 }, sortBy: [SortDescriptor(\.salary, order: .reverse)])
            #expect(try context.fetch(request).map(\.name) == ["Barbara", "Ada", "Grace", "Alan", "Edsger"])
            let byDepartment = try FetchRequest<Employee>(sortBy: [
                SortDescriptor(\.department?.name), SortDescriptor(\.name),
            ])
            #expect(
                try context.fetch(byDepartment).map(\.name) == ["Ken", "Ada", "Alan", "Grace", "Barbara", "Edsger"])
            request.fetchLimit = 2
            #expect(try context.fetch(request).map(\.name) == ["Barbara", "Ada"])
            let failure = #expect(throws: CoreDataError.self) {
                _ = try FetchRequest<Employee>(sortBy: [SortDescriptor(\.doubledSalary)])
            }
            #expect(failure?.code == .coreData)
        }
    }

    // MARK: Helpers

    /// The predicate's structure in format syntax, with `BLOCK` for block predicates and
    /// `$name` for variables (independent of how `predicateFormat` prints).
    static func structure(_ predicate: FetchPredicate) -> String {
        switch predicate.node {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let all): return "(" + all.map(structure).joined(separator: " AND ") + ")"
        case .or(let any): return "(" + any.map(structure).joined(separator: " OR ") + ")"
        case .not(let inner): return "NOT (\(structure(inner)))"
        case .block: return "BLOCK"
        case .comparison(let comparison):
            let modifier = comparison.modifier == .any ? "ANY " : comparison.modifier == .all ? "ALL " : ""
            return
                "\(modifier)\(structure(comparison.left)) \(comparison.operator.rawValue) \(structure(comparison.right))"
        }
    }

    static func structure(_ expression: FetchExpression) -> String {
        switch expression {
        case .constant(let value): return literal(value)
        case .evaluatedObject: return "SELF"
        case .keyPath(let path, on: .evaluatedObject): return path
        case .keyPath(let path, on: let base): return "\(structure(base)).\(path)"
        case .variable(let name): return "$" + name
        case .aggregate(let elements): return "{" + elements.map(structure).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(structure(collection)), $\(variable), \(structure(predicate)))"
        case .function(let name, let arguments):
            return name + "(" + arguments.map(structure).joined(separator: ", ") + ")"
        case .method(let target, let selector, let arguments):
            return "FUNCTION(" + ([structure(target), "\"\(selector)\""] + arguments.map(structure)).joined(separator: ", ")
                + ")"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(structure(request)), \(structure(context)), \(countOnly))"
        }
    }

    private static func literal(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let string as String: return "\"\(string)\""
        case let array as [Any]: return "{" + array.map { literal($0) }.joined(separator: ", ") + "}"
        case let value?: return "\(value)"
        }
    }
}
