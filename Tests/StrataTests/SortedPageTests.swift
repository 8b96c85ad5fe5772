import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A page of a fetch sorted in memory (a sort key without a fetch index) is the same slice of
/// the whole sorted result, ties in the same order, whatever the limit and offset.
@Suite struct SortedPageTests {
    @Test func pagesAreSlicesOfTheWholeOrder() throws {
        let directory = TemporaryDirectory()
        let container = try GraphModel.container(at: directory.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var generator = SplitMix64(seed: 7)
            // Few distinct names and notes: many ties, which the stores' order must break.
            for number in 0..<600 {
                let employee = Employee(context: context)
                employee.name = "name \(generator.next() % 40)"
                employee.notes = generator.next() % 3 == 0 ? nil : "note \(generator.next() % 5)"
                employee.salary = Int64(number)
            }
            try context.save()
            // Unsaved objects take part in the order too.
            for number in 0..<30 {
                let employee = Employee(context: context)
                employee.name = "name \(generator.next() % 40)"
                employee.salary = Int64(1_000 + number)
            }
            let orders: [[FetchSortDescriptor]] = [
                [FetchSortDescriptor(key: "name", ascending: true)],
                [FetchSortDescriptor(key: "name", ascending: false)],
                [FetchSortDescriptor(key: "notes", ascending: true), FetchSortDescriptor(key: "name", ascending: false)],
            ]
            for order in orders {
                let whole = Employee.fetchRequest()
                whole.sortDescriptors = order
                let all = try context.fetch(whole).map(\.salary)
                #expect(all.count == 630)
                for (offset, limit) in [(0, 1), (0, 25), (17, 40), (600, 50), (625, 10), (0, 629), (0, 630), (3, 2_000)] {
                    let page = Employee.fetchRequest()
                    page.sortDescriptors = order
                    page.fetchOffset = offset
                    page.fetchLimit = limit
                    let expected = Array(all.dropFirst(offset).prefix(limit))
                    #expect(try context.fetch(page).map(\.salary) == expected, "\(order) offset \(offset) limit \(limit)")
                }
            }
        }
        try container.close()
    }
}
