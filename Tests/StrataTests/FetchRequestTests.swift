import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// What `FetchRequest` offers beyond the predicate: sort comparisons, limits on every result
/// type, batches, dictionary properties and aggregates, faults, prefetching and counts; each on a
/// store reopened from disk, with and without unsaved changes.
@Suite struct FetchRequestTests {
    /// The saved employees: name, salary, active, department (index into `departments`, or nil).
    static let people: [(String, Int64, Bool, Int?)] = [
        ("adam", 40_000, true, 0), ("Ádám", 45_000, false, 0), ("bea", 52_000, true, 1), ("Bob", 61_000, true, 1),
        ("file10", 70_000, false, 2), ("file2", 70_000, true, 2), ("émile", 83_000, true, nil),
        ("Zoë", 95_000, true, 0),
        ("zed", 99_000, false, 1), ("carl", 120_000, true, 2),
    ]
    static let departments = ["Research", "Sales", "Ops"]

    /// A container reopened on a store holding `people` and `departments`.
    static func reopened(_ folder: TemporaryDirectory) throws -> PersistentContainer {
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let units = departments.map { name -> Department in
                    let department = Department(context: context)
                    department.name = name
                    department.budget = Double(name.count) * 1_000
                    return department
                }
                for (name, salary, active, department) in people {
                    let employee = Employee(context: context)
                    employee.name = name
                    employee.salary = salary
                    employee.active = active
                    employee.notes = active ? "note \(name)" : nil
                    employee.department = department.map { units[$0] }
                }
                try context.save()
            }
            try container.close()
        }
        return try GraphModel.container(at: folder.store())
    }

    static func employees(_ descriptors: [FetchSortDescriptor], pending: Bool = true) -> FetchRequest<Employee> {
        let request = Employee.fetchRequest()
        request.sortDescriptors = descriptors
        request.includesPendingChanges = pending
        return request
    }

    @Test func sortComparisonsKeysAndNils() throws {
        let folder = TemporaryDirectory()
        let container = try Self.reopened(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let newcomer = Employee(context: context)
            newcomer.name = "file3"
            newcomer.salary = 10
            for pending in [false, true] {
                let names = Self.people.map(\.0) + (pending ? ["file3"] : [])
                for comparison in FetchSortDescriptor.Comparison.allCases {
                    for ascending in [true, false] {
                        let fetched = try context.fetch(
                            Self.employees(
                                [FetchSortDescriptor(key: "name", ascending: ascending, comparison: comparison)],
                                pending: pending)
                        ).map(\.name)
                        let expected = names.sorted { left, right in
                            let order = FetchSortDescriptor.order(left, right, comparison)
                            return ascending ? order == .orderedAscending : order == .orderedDescending
                        }
                        #expect(fetched == expected, "\(comparison) \(ascending) pending \(pending)")
                    }
                }
            }
            let standard = try context.fetch(
                Self.employees([FetchSortDescriptor(key: "name", comparison: .localizedStandardCompare)])
            ).map(\.name)
            #expect(
                standard.firstIndex(of: "file2")! < standard.firstIndex(of: "file3")!
                    && standard.firstIndex(of: "file3")! < standard.firstIndex(of: "file10")!,
                "numbers in strings by value")
            let plain = try context.fetch(Self.employees([FetchSortDescriptor(key: "name")])).map(\.name)
            #expect(plain.firstIndex(of: "file10")! < plain.firstIndex(of: "file2")!)
            #expect(FetchSortDescriptor(key: "name", caseInsensitive: true).comparison == .caseInsensitiveCompare)

            // Several keys, a key path through a to-one relationship, nil first ascending and last descending.
            let byDepartment = try context.fetch(
                Self.employees([
                    FetchSortDescriptor(key: "department.name"), FetchSortDescriptor(key: "salary", ascending: false),
                    FetchSortDescriptor(key: "name"),
                ])
            ).map(\.name)
            #expect(
                byDepartment == [
                    "émile", "file3", "carl", "file10", "file2", "Zoë", "Ádám", "adam", "zed", "Bob", "bea",
                ])
            let nilsLast = try context.fetch(Self.employees([FetchSortDescriptor(key: "notes", ascending: false)])).map(
                \.notes)
            #expect(
                nilsLast.suffix(4).allSatisfy { $0 == nil } && nilsLast.prefix(7).allSatisfy { $0 != nil },
                "nil sorts last descending")
            let nilsFirst = try context.fetch(Self.employees([FetchSortDescriptor(key: "notes")])).map(\.notes)
            #expect(nilsFirst.prefix(4).allSatisfy { $0 == nil }, "nil sorts first ascending")
        }
        try container.close()
    }

    @Test(arguments: [false, true]) func limitAndOffsetOnEveryResultType(pending: Bool) throws {
        let folder = TemporaryDirectory()
        let container = try Self.reopened(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let cheap = Employee(context: context)
            cheap.name = "cheap"
            cheap.salary = 1
            let byName = Dictionary(uniqueKeysWithValues: try context.fetch(Self.employees([])).map { ($0.name, $0) })
            context.delete(byName["bea"]!)
            let storedOrder = ["adam", "Ádám", "bea", "Bob", "file10", "file2", "émile", "Zoë", "zed", "carl"]
            let order = pending ? ["cheap"] + storedOrder.filter { $0 != "bea" } : storedOrder
            let salary = [FetchSortDescriptor(key: "salary"), FetchSortDescriptor(key: "name")]
            for (limit, offset) in [(2, 1), (0, 3), (3, 0), (4, 9), (1, 20)] {
                let expected = Array(order.dropFirst(offset).prefix(limit > 0 ? limit : Int.max))
                let objects = Self.employees(salary, pending: pending)
                objects.fetchLimit = limit
                objects.fetchOffset = offset
                #expect(try context.fetch(objects).map(\.name) == expected, "objects \(limit) \(offset)")
                #expect(try context.count(for: objects) == expected.count)

                let ids = FetchRequest<ManagedObjectID>(entityName: "Employee")
                ids.resultType = .managedObjectIDResultType
                ids.sortDescriptors = salary
                ids.includesPendingChanges = pending
                ids.fetchLimit = limit
                ids.fetchOffset = offset
                #expect(
                    try context.fetch(ids) == expected.map { byName[$0]?.objectID ?? cheap.objectID },
                    "IDs \(limit) \(offset)")
                #expect(try context.count(for: ids) == expected.count)

                let counts = FetchRequest<Int>(entityName: "Employee")
                counts.resultType = .countResultType
                counts.includesPendingChanges = pending
                counts.fetchLimit = limit
                counts.fetchOffset = offset
                #expect(try context.fetch(counts) == [expected.count], "count \(limit) \(offset)")

                // Dictionaries reflect the store only, whatever includesPendingChanges says.
                let dictionaries = FetchRequest<[String: Any]>(entityName: "Employee")
                dictionaries.resultType = .dictionaryResultType
                dictionaries.propertiesToFetch = ["name"]
                dictionaries.sortDescriptors = salary
                dictionaries.includesPendingChanges = pending
                dictionaries.fetchLimit = limit
                dictionaries.fetchOffset = offset
                let stored = Array(storedOrder.dropFirst(offset).prefix(limit > 0 ? limit : Int.max))
                #expect(
                    try context.fetch(dictionaries).map { $0["name"] as? String } == stored,
                    "dictionaries \(limit) \(offset)")
                #expect(try context.count(for: dictionaries) == stored.count)
            }
        }
        try container.close()
    }

    @Test func batchedResultsRealizeObjectsBatchByBatch() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for index in 0..<25 {
                    let employee = Employee(context: context)
                    employee.name = "e\(index)"
                    employee.salary = Int64(1_000 * (25 - index))
                }
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Self.employees([FetchSortDescriptor(key: "salary")])
            request.fetchBatchSize = 10
            let results = try context.fetchBatched(request)
            #expect(results.count == 25)
            #expect(results.batchSize == 10)
            let ids = results.objectIDs
            #expect(
                ids.allSatisfy { context.registeredObject(for: $0) == nil },
                "no object is realized before its batch is touched")
            #expect(results[12].name == "e12")
            for (position, id) in ids.enumerated() {
                let inBatch = (10..<20).contains(position)
                #expect((context.registeredObject(for: id)?.isFault == false) == inBatch, "object \(position)")
                #expect(results.isRealized(at: position) == inBatch)
            }
            #expect(results.map(\.name) == (0..<25).map { "e\(24 - $0)" })
            #expect(ids.allSatisfy { context.registeredObject(for: $0)?.isFault == false })

            // With pending changes, the batches hold the inserted objects too.
            let late = Employee(context: context)
            late.name = "late"
            late.salary = 500
            let again = try context.fetchBatched(request)
            #expect(again.count == 26)
            #expect(again[0] === late)

            // fetch(_:) realizes the first batch and returns the others as faults.
            let other = container.newBackgroundContext()
            try other.performAndWait {
                let request = Self.employees([FetchSortDescriptor(key: "name")])
                request.fetchBatchSize = 5
                let objects = try other.fetch(request)
                #expect(objects.count == 25)
                #expect(objects.prefix(5).allSatisfy { !$0.isFault })
                #expect(objects.dropFirst(5).allSatisfy { $0.isFault })
                #expect(objects.map(\.name) == (0..<25).map { "e\($0)" }.sorted())
            }
            let wrong = FetchRequest<Employee>(entityName: "Employee")
            wrong.resultType = .managedObjectIDResultType
            #expect(throws: CoreDataError.self) { _ = try context.fetchBatched(wrong) }
        }
        try container.close()
    }

    @Test func dictionaryPropertiesGroupsAndAggregates() throws {
        let folder = TemporaryDirectory()
        let container = try Self.reopened(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let model = container.managedObjectModel
            let employee = model.entitiesByName["Employee"]!
            // Pending changes are not seen by dictionary fetches.
            let stored = try context.fetch(Self.employees([FetchSortDescriptor(key: "name")]))
            stored[0].salary = 1
            let ghost = Employee(context: context)
            ghost.name = "ghost"

            let request = FetchRequest<[String: Any]>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [
                "name", employee.propertiesByName["salary"]!, "department.name",
                ExpressionDescription(name: "pay", function: nil, keyPath: "salary"),
            ]
            request.predicate = FetchPredicate(key: "salary", .lessThan, 60_000)
            request.sortDescriptors = [FetchSortDescriptor(key: "salary")]
            let rows = try context.fetch(request)
            #expect(rows.map { $0["name"] as? String } == ["adam", "Ádám", "bea"])
            #expect(rows.map { $0["salary"] as? Int64 } == [40_000, 45_000, 52_000])
            #expect(rows.map { $0["pay"] as? Int64 } == [40_000, 45_000, 52_000])
            #expect(rows.map { $0["department.name"] as? String } == ["Research", "Research", "Sales"])
            #expect(rows.allSatisfy { $0.count == 4 })

            // Grouped by department, with every aggregate.
            let grouped = FetchRequest<[String: Any]>(entityName: "Employee")
            grouped.resultType = .dictionaryResultType
            grouped.propertiesToFetch = [
                "department.name",
                ExpressionDescription(name: "headcount", function: .count, keyPath: "name"),
                ExpressionDescription(
                    name: "total", function: .sum, keyPath: "salary", resultType: .integer64AttributeType),
                ExpressionDescription(
                    name: "mean", function: .average, keyPath: "salary", resultType: .doubleAttributeType),
                ExpressionDescription(name: "lowest", function: .min, keyPath: "salary"),
                ExpressionDescription(name: "highest", function: .max, keyPath: "salary"),
            ]
            grouped.propertiesToGroupBy = ["department.name"]
            grouped.sortDescriptors = [FetchSortDescriptor(key: "department.name")]
            let groups = try context.fetch(grouped)
            #expect(groups.map { $0["department.name"] as? String } == [nil, "Ops", "Research", "Sales"])
            #expect(groups.map { $0["headcount"] as? Int } == [1, 3, 3, 3])
            #expect(groups.map { $0["total"] as? Int64 } == [83_000, 260_000, 180_000, 212_000])
            #expect(groups.map { $0["lowest"] as? Int64 } == [83_000, 70_000, 40_000, 52_000])
            #expect(groups.map { $0["highest"] as? Int64 } == [83_000, 120_000, 95_000, 99_000])
            #expect(groups[1]["mean"] as? Double == 260_000.0 / 3)
            #expect(try context.count(for: grouped) == 4)

            grouped.havingPredicate = FetchPredicate(key: "total", .greaterThan, 200_000)
            #expect(try context.fetch(grouped).map { $0["department.name"] as? String } == ["Ops", "Sales"])
            grouped.fetchLimit = 1
            #expect(try context.fetch(grouped).map { $0["department.name"] as? String } == ["Ops"])

            // Aggregates alone: one dictionary over every match.
            let totals = FetchRequest<[String: Any]>(entityName: "Employee")
            totals.resultType = .dictionaryResultType
            totals.propertiesToFetch = [
                ExpressionDescription(name: "total", function: .sum, keyPath: "salary"),
                ExpressionDescription(name: "n", function: .count, keyPath: "salary"),
            ]
            totals.predicate = FetchPredicate(key: "active", .equalTo, false)
            let total = try #require(try context.fetch(totals).first)
            #expect(total["total"] as? Int64 == Int64(45_000 + 70_000 + 99_000))
            #expect(total["n"] as? Int == 3)

            // Distinct values.
            let distinct = FetchRequest<[String: Any]>(entityName: "Employee")
            distinct.resultType = .dictionaryResultType
            distinct.propertiesToFetch = ["active"]
            distinct.returnsDistinctResults = true
            distinct.sortDescriptors = [FetchSortDescriptor(key: "active")]
            #expect(try context.fetch(distinct).map { $0["active"] as? Bool } == [false, true])
            #expect(try context.count(for: distinct) == 2)

            // Core Data's rule: a fetched property that is not an aggregate must be grouped by.
            let invalid = FetchRequest<[String: Any]>(entityName: "Employee")
            invalid.resultType = .dictionaryResultType
            invalid.propertiesToFetch = ["name", ExpressionDescription(name: "n", function: .count, keyPath: "name")]
            invalid.propertiesToGroupBy = ["department"]
            #expect(throws: CoreDataError.self) { _ = try context.fetch(invalid) }
            invalid.propertiesToGroupBy = nil
            #expect(throws: CoreDataError.self) { _ = try context.fetch(invalid) }
            invalid.propertiesToFetch = ["nickname"]
            #expect(throws: CoreDataError.self) { _ = try context.fetch(invalid) }
            invalid.propertiesToFetch = [model.entitiesByName["Department"]!.propertiesByName["employees"]!]
            invalid.entityName = "Department"
            #expect(throws: CoreDataError.self) { _ = try context.fetch(invalid) }
        }
        try container.close()
    }

    @Test func faultsPropertyValuesAndPrefetching() throws {
        let folder = TemporaryDirectory()
        let container = try Self.reopened(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let faults = Self.employees([FetchSortDescriptor(key: "salary")])
            faults.includesPropertyValues = false
            faults.predicate = FetchPredicate(key: "salary", .greaterThan, 90_000)
            let found = try context.fetch(faults)
            #expect(found.count == 3)
            let allFaults = found.allSatisfy { $0.isFault }
            #expect(allFaults, "without property values objects are faults")
            #expect(found.map(\.name) == ["Zoë", "zed", "carl"], "firing them reads their values")

            let realized = Self.employees([])
            realized.returnsObjectsAsFaults = false
            realized.predicate = FetchPredicate(key: "department", .equalTo, nil)
            let loner = try context.fetch(realized)
            #expect(loner.count == 1 && loner.allSatisfy { !$0.isFault })
            faults.predicate = nil
            #expect(
                try context.fetch(faults).filter { !$0.isFault }.count == 4, "registered realized objects stay realized"
            )

            // Without prefetching, departments are not realized; with it, in one pass.
            let departmentIDs = try context.fetch(Department.fetchRequest()).map(\.objectID)
            context.reset()
            _ = try context.fetch(Self.employees([]))
            #expect(departmentIDs.allSatisfy { context.registeredObject(for: $0) == nil })
            let prefetching = Self.employees([])
            prefetching.relationshipKeyPathsForPrefetching = ["department"]
            _ = try context.fetch(prefetching)
            #expect(departmentIDs.allSatisfy { context.registeredObject(for: $0)?.isFault == false })

            context.reset()
            let departments = Department.fetchRequest()
            departments.relationshipKeyPathsForPrefetching = ["employees.department"]
            let units = try context.fetch(departments)
            let loaded = units.allSatisfy { !$0.hasFault(forRelationshipNamed: "employees") }
            #expect(loaded)
            let staffIDs = units.flatMap { $0.objectIDs(forRelationshipNamed: "employees") }
            #expect(staffIDs.count == 9)
            #expect(staffIDs.allSatisfy { context.registeredObject(for: $0)?.isFault == false }, "to-many prefetched")
        }
        try container.close()
    }

    @Test func countForEveryCombination() throws {
        let folder = TemporaryDirectory()
        let container = try Self.reopened(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let stored = try context.fetch(Self.employees([FetchSortDescriptor(key: "name")]))
            stored[1].salary = 200_000
            context.delete(stored[2])
            let extra = Employee(context: context)
            extra.name = "extra"
            extra.salary = 100_000
            let predicates: [FetchPredicate?] = [
                nil, FetchPredicate(key: "salary", .greaterThan, 65_000), FetchPredicate(key: "active", .equalTo, true),
                FetchPredicate(andPredicateWithSubpredicates: [
                    FetchPredicate(key: "salary", .greaterThan, 65_000), FetchPredicate(key: "active", .equalTo, true),
                ]),
                FetchPredicate(key: "department", .equalTo, nil), FetchPredicate(value: false),
            ]
            for predicate in predicates {
                for pending in [true, false] {
                    for (limit, offset) in [(0, 0), (2, 0), (0, 2), (3, 5)] {
                        for propertyValues in [true, false] {
                            let request = Self.employees([FetchSortDescriptor(key: "salary")], pending: pending)
                            request.predicate = predicate
                            request.fetchLimit = limit
                            request.fetchOffset = offset
                            request.includesPropertyValues = propertyValues
                            let fetched = try context.fetch(request)
                            #expect(
                                try context.count(for: request) == fetched.count,
                                "\(predicate?.description ?? "nil") \(pending) \(limit) \(offset)")
                            guard pending else { continue }
                            // With pending changes, everything is matched on the in-memory state.
                            let all = try context.fetch(Self.employees([])).filter {
                                predicate?.evaluate(with: $0) ?? true
                            }
                            #expect(fetched.count == max(0, min(all.count - offset, limit > 0 ? limit : Int.max)))
                        }
                    }
                }
            }
        }
        try container.close()
    }
}
