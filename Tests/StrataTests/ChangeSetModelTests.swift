import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Random sequences of inserts, changes, deletes, events, saves and rollbacks, checked after
/// each step against a model of what Core Data's `insertedObjects`, `updatedObjects` and
/// `deletedObjects` hold, and the store against the saves, through a reopen. The context keeps
/// its change sets as arrays in which each object knows its position (``ChangedObjects``),
/// compacted as objects leave them: the sequences are long enough to compact them often.
@Suite struct ChangeSetModelTests {
    @Test(arguments: [1, 2, 3] as [UInt64]) func changeSetsFollowTheModel(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        var stored: [String: Int64] = [:]
        try context.performAndWait {
            var saved: [Employee] = []
            var inserted: [Employee] = []
            var updated = Set<ObjectIdentifier>()
            var deleted = Set<ObjectIdentifier>()
            var made = 0
            var salary: Int64 = 0
            for _ in 0..<1_000 {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<40:
                    let employee = Employee(context: context)
                    employee.name = "e\(made)"
                    made += 1
                    inserted.append(employee)
                case 40..<60:
                    salary += 1
                    if Bool.random(using: &random), let employee = inserted.randomElement(using: &random) {
                        employee.salary = salary
                    } else if let employee = saved.filter({ !deleted.contains(ObjectIdentifier($0)) }).randomElement(
                        using: &random)
                    {
                        employee.salary = salary
                        updated.insert(ObjectIdentifier(employee))
                    }
                case 60..<80:
                    if Bool.random(using: &random), let index = inserted.indices.randomElement(using: &random) {
                        context.delete(inserted.remove(at: index))
                    } else if let employee = saved.filter({ !deleted.contains(ObjectIdentifier($0)) }).randomElement(
                        using: &random)
                    {
                        context.delete(employee)
                        updated.remove(ObjectIdentifier(employee))
                        deleted.insert(ObjectIdentifier(employee))
                    }
                case 80..<84:
                    // Many at once: about half the inserted and of the saved objects.
                    for employee in inserted where Bool.random(using: &random) {
                        context.delete(employee)
                        inserted.removeAll { $0 === employee }
                    }
                    for employee in saved
                    where !deleted.contains(ObjectIdentifier(employee)) && Bool.random(using: &random) {
                        context.delete(employee)
                        updated.remove(ObjectIdentifier(employee))
                        deleted.insert(ObjectIdentifier(employee))
                    }
                case 84..<92:
                    context.processPendingChanges()
                case 92..<97:
                    try context.save()
                    saved.removeAll { deleted.contains(ObjectIdentifier($0)) }
                    saved += inserted
                    inserted = []
                    updated = []
                    deleted = []
                    stored = Dictionary(uniqueKeysWithValues: saved.map { ($0.name, $0.salary) })
                default:
                    context.rollback()
                    inserted = []
                    updated = []
                    deleted = []
                }
                #expect(
                    Set(context.insertedObjects.map(ObjectIdentifier.init)) == Set(inserted.map(ObjectIdentifier.init)))
                #expect(Set(context.updatedObjects.map(ObjectIdentifier.init)) == updated)
                #expect(Set(context.deletedObjects.map(ObjectIdentifier.init)) == deleted)
                #expect(context.hasChanges == !(inserted.isEmpty && updated.isEmpty && deleted.isEmpty))
            }
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let employees = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            #expect(Dictionary(uniqueKeysWithValues: employees.map { ($0.name, $0.salary) }) == stored)
        }
        try reopened.close()
    }
}
