import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The old and new values of to-many relationships kept in join entities: an update's
/// `previousValues` and `newValues` cover every property its `updatedProperties` lists, worked
/// back from the stored pairs through later history, on a store reopened from disk.
@Suite struct PersistentHistoryToManyValuesTests {
    typealias History = PersistentHistoryTests

    @Test func toManyEditsCarryTheRelatedObjectsBeforeAndAfter() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Enrollment")
        let model = PersistentHistoryPreviousValuesTests.enrollmentModel()
        var container = try History.container(at: url, model: model)
        let context = container.newBackgroundContext()
        let (student, algebra, biology, chemistry, token) = try context.performAndWait {
            func course(_ title: String) -> ManagedObject {
                let course = ManagedObject(entity: model.entitiesByName["Course"]!, insertInto: context)
                course.setValue(title, forKey: "title")
                return course
            }
            let student = ManagedObject(entity: model.entitiesByName["Student"]!, insertInto: context)
            student.setValue("Ada", forKey: "name")
            let algebra = course("Algebra"), biology = course("Biology"), chemistry = course("Chemistry")
            student.mutableSetValue(forKey: "courses").add(algebra)
            try context.save()
            let token = try #require(
                container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            student.mutableSetValue(forKey: "courses").remove(algebra)
            student.mutableSetValue(forKey: "courses").add(biology)
            try context.save()
            student.setValue("Ada L.", forKey: "name")
            student.mutableSetValue(forKey: "courses").add(chemistry)
            try context.save()
            return (student.objectID, algebra.objectID, biology.objectID, chemistry.objectID, token)
        }
        try container.close()
        container = try History.container(at: url, model: model)

        let transactions = try History.transactions(.fetchHistory(after: token), in: container)
        #expect(transactions.count == 2)
        for change in transactions.flatMap({ $0.changes ?? [] }) {
            #expect(change.changeType == .update)
            for property in change.updatedProperties ?? [] {
                #expect(
                    change.previousValues?[property.name] != nil,
                    "\(property.name) of \(change.changedObjectID) has no old value")
                #expect(
                    change.newValues?[property.name] != nil,
                    "\(property.name) of \(change.changedObjectID) has no new value")
            }
        }
        func change(_ id: ManagedObjectID, in transaction: Int) throws -> PersistentHistoryChange {
            try #require(transactions[transaction].changes?.first { $0.changedObjectID == id })
        }
        let swap = try change(student, in: 0)
        #expect(swap.previousValues?["courses"] as? Set<ManagedObjectID> == [algebra])
        #expect(swap.newValues?["courses"] as? Set<ManagedObjectID> == [biology])
        #expect(try change(algebra, in: 0).previousValues?["students"] as? Set<ManagedObjectID> == [student])
        #expect(try change(algebra, in: 0).newValues?["students"] as? Set<ManagedObjectID> == [])
        #expect(try change(biology, in: 0).previousValues?["students"] as? Set<ManagedObjectID> == [])

        let addition = try change(student, in: 1)
        #expect(addition.updatedProperties.map { Set($0.map(\.name)) } == ["name", "courses"])
        #expect(addition.previousValues?["name"] as? String == "Ada")
        #expect(addition.previousValues?["courses"] as? Set<ManagedObjectID> == [biology])
        #expect(addition.newValues?["courses"] as? Set<ManagedObjectID> == [biology, chemistry])
        #expect(try change(chemistry, in: 1).newValues?["students"] as? Set<ManagedObjectID> == [student])
        try container.close()
    }

    /// The to-many values are worked out when first read, not when fetched: values read after
    /// later saves are still those of the change, and a fetch whose values nobody reads pays
    /// no read of the relationship's pairs.
    @Test func toManyValuesReadAfterLaterSavesAreTheChangesOwn() throws {
        let folder = TemporaryDirectory()
        let model = PersistentHistoryPreviousValuesTests.enrollmentModel()
        let container = try History.container(at: folder.store("Enrollment"), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            func course(_ title: String) -> ManagedObject {
                let course = ManagedObject(entity: model.entitiesByName["Course"]!, insertInto: context)
                course.setValue(title, forKey: "title")
                return course
            }
            let student = ManagedObject(entity: model.entitiesByName["Student"]!, insertInto: context)
            student.setValue("Ada", forKey: "name")
            let algebra = course("Algebra")
            try context.save()
            let token = try #require(
                container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            student.mutableSetValue(forKey: "courses").add(algebra)
            try context.save()

            let transactions = try History.transactions(.fetchHistory(after: token), in: container)
            let enrolment = try #require(transactions.first?.changes?.first { $0.changedObjectID == student.objectID })
            #expect(enrolment.pendingToManyValues != nil, "fetched, not yet worked out")
            student.mutableSetValue(forKey: "courses").add(course("Biology"))
            student.mutableSetValue(forKey: "courses").remove(algebra)
            try context.save()

            #expect(enrolment.previousValues?["courses"] as? Set<ManagedObjectID> == [])
            #expect(enrolment.newValues?["courses"] as? Set<ManagedObjectID> == [algebra.objectID])
            #expect(enrolment.pendingToManyValues == nil)
        }
        try container.close()
    }

    @Test func changesOnlyResultsCarryToManyValuesToo() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Enrollment")
        let model = PersistentHistoryPreviousValuesTests.enrollmentModel()
        let container = try History.container(at: url, model: model)
        let context = container.newBackgroundContext()
        let (student, course, token) = try context.performAndWait {
            let student = ManagedObject(entity: model.entitiesByName["Student"]!, insertInto: context)
            student.setValue("Grace", forKey: "name")
            let course = ManagedObject(entity: model.entitiesByName["Course"]!, insertInto: context)
            course.setValue("Logic", forKey: "title")
            try context.save()
            let token = try #require(
                container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            student.mutableSetValue(forKey: "courses").add(course)
            try context.save()
            return (student.objectID, course.objectID, token)
        }
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.resultType = .changesOnly
        let changes = try context.performAndWait {
            try #require(
                (try context.execute(request) as? PersistentHistoryResult)?.result as? [PersistentHistoryChange])
        }
        let change = try #require(changes.first { $0.changedObjectID == student })
        #expect(change.previousValues?["courses"] as? Set<ManagedObjectID> == [])
        #expect(change.newValues?["courses"] as? Set<ManagedObjectID> == [course])
        try container.close()
    }
}
