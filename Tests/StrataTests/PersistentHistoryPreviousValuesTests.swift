import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// History beyond Core Data's: the process that saved, the values before an update, the full
/// last state of a deleted object, relationship edits kept only in join rows, and point-in-time
/// reads, on stores on disk and after reopening them.
@Suite struct PersistentHistoryPreviousValuesTests {
    typealias History = PersistentHistoryTests

    @Test func transactionsRecordTheSavingProcess() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        try History.insert(["Ada"], in: container)
        try container.close()
        container = try History.container(at: folder.store())
        let transaction = try #require(
            try History.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container).first)
        #expect(transaction.processID == String(ProcessInfo.processInfo.processIdentifier))
        #expect(transaction.bundleID == (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName))
        #expect(!transaction.bundleID.isEmpty)

        let byProcess = try #require(PersistentHistoryTransaction.fetchRequest)
        byProcess.predicate = try FetchPredicate(checkedFormat: "processID == %@", "0")
        let request = PersistentHistoryChangeRequest.fetchHistory(withFetch: byProcess)
        #expect(try History.transactions(request, in: container).isEmpty)
    }

    @Test func updatesCarryTheirPreviousValuesAndDeletesTheLastState() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        let ids = try History.insert(["Ada", "Grace"], in: container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
            ada.salary = 90_000
            ada.notes = "promoted"
            let grace = try #require(try context.existingObject(with: ids[1]) as? Employee)
            grace.notes = "leaving"
            try context.save()
            context.delete(grace)
            try context.save()
        }
        try container.close()
        container = try History.container(at: folder.store())

        let later = try History.transactions(.fetchHistory(after: token), in: container)
        #expect(later.count == 2)
        let update = try #require(later.first?.changes?.first { $0.changedObjectID == ids[0] })
        #expect(update.changeType == .update)
        #expect(update.previousValues?["salary"] as? Int64 == 50_000)
        #expect(update.previousValues?["notes"] is NSNull)
        #expect(update.previousValues?["name"] == nil, "only the changed properties")
        let delete = try #require(later.last?.changes?.first)
        #expect(delete.changeType == .delete && delete.changedObjectID == ids[1])
        #expect(delete.previousValues?["name"] as? String == "Grace")
        #expect(delete.previousValues?["notes"] as? String == "leaving")
        #expect(delete.previousValues?["salary"] as? Int64 == 50_000)
        #expect(delete.previousValues?["department"] is NSNull)
        let insert = try #require(
            try History.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container).first?
                .changes?.first)
        #expect(insert.changeType == .insert && insert.previousValues == nil)
    }

    @Test func valuesAsOfATokenReadThePastState() throws {
        let folder = TemporaryDirectory()
        let container = try History.container(at: folder.store())
        let coordinator = container.persistentStoreCoordinator
        let before = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let ids = try History.insert(["Ada", "Grace"], in: container)
        let inserted = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
            ada.salary = 70_000
            try context.save()
            ada.salary = 80_000
            try context.save()
            context.delete(try context.existingObject(with: ids[1]))
            try context.save()
        }
        let now = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))

        #expect(try coordinator.committedValues(forObjectWith: ids[0], asOf: before) == nil, "not inserted yet")
        #expect(try coordinator.committedValues(forObjectWith: ids[0], asOf: inserted)?["salary"] as? Int64 == 50_000)
        let first = PersistentHistoryToken(storeIdentifier: inserted.storeIdentifier, sequence: inserted.sequence + 1)
        #expect(try coordinator.committedValues(forObjectWith: ids[0], asOf: first)?["salary"] as? Int64 == 70_000)
        #expect(try coordinator.committedValues(forObjectWith: ids[0], asOf: now)?["salary"] as? Int64 == 80_000)
        #expect(try coordinator.committedValues(forObjectWith: ids[1], asOf: inserted)?["name"] as? String == "Grace")
        #expect(try coordinator.committedValues(forObjectWith: ids[1], asOf: now) == nil, "deleted")

        _ = try History.run(.deleteHistory(before: now), in: container)
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.committedValues(forObjectWith: ids[0], asOf: inserted)
        }
        #expect(error?.code == .persistentHistoryTokenExpired)
    }

    /// Students and courses, many-to-many: the pairs live only in a join entity.
    static func enrollmentModel() -> ManagedObjectModel {
        let student = ModelBuilder.entity("Student", [ModelBuilder.attribute("name", .string)])
        let course = ModelBuilder.entity("Course", [ModelBuilder.attribute("title", .string)])
        let courses = ModelBuilder.relationship("courses", from: student, to: course, toMany: true)
        let students = ModelBuilder.relationship("students", from: course, to: student, toMany: true)
        ModelBuilder.inverse(courses, students)
        return ModelBuilder.model([student, course])
    }

    @Test func manyToManyEditsAreUpdatesOfBothObjects() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Enrollment")
        let model = Self.enrollmentModel()
        var container = try History.container(at: url, model: model)
        let context = container.newBackgroundContext()
        let (studentID, courseID, otherID, token) = try context.performAndWait {
            let student = ManagedObject(entity: model.entitiesByName["Student"]!, insertInto: context)
            student.setValue("Ada", forKey: "name")
            let course = ManagedObject(entity: model.entitiesByName["Course"]!, insertInto: context)
            course.setValue("Algebra", forKey: "title")
            let other = ManagedObject(entity: model.entitiesByName["Course"]!, insertInto: context)
            other.setValue("Biology", forKey: "title")
            student.mutableSetValue(forKey: "courses").add(course)
            try context.save()
            let token = try #require(
                container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            student.mutableSetValue(forKey: "courses").remove(course)
            student.mutableSetValue(forKey: "courses").add(other)
            try context.save()
            return (student.objectID, course.objectID, other.objectID, token)
        }
        try container.close()
        container = try History.container(at: url, model: model)

        let first = try #require(
            try History.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: container).first)
        #expect(
            first.changes?.map(\.changeType) == [.insert, .insert, .insert],
            "inserted objects need no relationship update")
        let edit = try #require(try History.transactions(.fetchHistory(after: token), in: container).first)
        let changes = try #require(edit.changes)
        #expect(changes.allSatisfy { $0.changeType == .update })
        #expect(Set(changes.map(\.changedObjectID)) == [studentID, courseID, otherID])
        #expect(changes.count == 3, "one change per object")
        let student = try #require(changes.first { $0.changedObjectID == studentID })
        #expect(student.updatedProperties?.map(\.name) == ["courses"])
        #expect(student.changedObjectID.entity.name == "Student")
        for course in changes where course.changedObjectID != studentID {
            #expect(course.updatedProperties?.map(\.name) == ["students"])
            #expect(course.changedObjectID.entity.name == "Course")
        }
        #expect(Set(changes.map(\.changeID)).count == 3)
    }
}
