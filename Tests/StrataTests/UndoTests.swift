import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The undo manager alone: groups, nesting, redo, levels and registration switches.
@Suite struct UndoManagerTests {
    final class Counter {
        var value = 0
        func add(_ amount: Int, in manager: UndoManager) {
            value += amount
            manager.registerUndo(withTarget: self) { $0.add(-amount, in: manager) }
        }
    }

    @Test func undoAndRedoRunGroupsInReverse() {
        let manager = UndoManager()
        let counter = Counter()
        #expect(!manager.canUndo && !manager.canRedo)
        manager.beginUndoGrouping()
        counter.add(1, in: manager)
        counter.add(10, in: manager)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        counter.add(100, in: manager)
        manager.setActionName("Hundred")
        manager.endUndoGrouping()
        #expect(counter.value == 111 && manager.undoActionName == "Hundred")
        manager.undo()
        #expect(counter.value == 11 && manager.canRedo && manager.redoActionName == "Hundred")
        manager.undo()
        #expect(counter.value == 0 && !manager.canUndo)
        manager.redo()
        #expect(counter.value == 11)
        // A new registration clears what could be redone.
        manager.beginUndoGrouping()
        counter.add(5, in: manager)
        manager.endUndoGrouping()
        #expect(!manager.canRedo)
        manager.undo()
        manager.undo()
        #expect(counter.value == 0)
    }

    @Test func groupsByEventOpensAGroupClosedByUndo() {
        let manager = UndoManager()
        let counter = Counter()
        counter.add(2, in: manager)
        counter.add(3, in: manager)
        #expect(manager.groupingLevel == 1 && manager.canUndo)
        manager.undo()
        #expect(counter.value == 0 && manager.groupingLevel == 0)
        manager.redo()
        #expect(counter.value == 5)
    }

    @Test func nestedGroupsUndoWithTheirOuterGroup() {
        let manager = UndoManager()
        let counter = Counter()
        manager.beginUndoGrouping()
        counter.add(1, in: manager)
        manager.beginUndoGrouping()
        counter.add(2, in: manager)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        manager.endUndoGrouping()
        manager.undo()
        #expect(counter.value == 0 && !manager.canUndo)
    }

    @Test func undoNestedGroupUndoesTheInnerGroupOnly() {
        let manager = UndoManager()
        let counter = Counter()
        manager.beginUndoGrouping()
        counter.add(1, in: manager)
        manager.beginUndoGrouping()
        counter.add(2, in: manager)
        manager.endUndoGrouping()
        manager.undoNestedGroup()
        #expect(counter.value == 1 && manager.groupingLevel == 1 && manager.canRedo)
        manager.endUndoGrouping()
        manager.undoNestedGroup()
        #expect(counter.value == 0 && !manager.canUndo)
    }

    @Test func removingTheActionsOfOneTarget() {
        let manager = UndoManager()
        let first = Counter(), second = Counter()
        manager.beginUndoGrouping()
        first.add(1, in: manager)
        second.add(2, in: manager)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        first.add(4, in: manager)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: first)
        #expect(manager.canUndo)
        manager.undo()
        #expect(first.value == 5 && second.value == 0 && !manager.canUndo)
    }

    @Test func disabledRegistrationAndLevelsOfUndo() {
        let manager = UndoManager()
        let counter = Counter()
        manager.disableUndoRegistration()
        counter.add(7, in: manager)
        #expect(!manager.isUndoRegistrationEnabled && !manager.canUndo)
        manager.enableUndoRegistration()
        manager.levelsOfUndo = 2
        for amount in [1, 2, 3] {
            manager.beginUndoGrouping()
            counter.add(amount, in: manager)
            manager.endUndoGrouping()
        }
        manager.undo()
        manager.undo()
        #expect(!manager.canUndo)
        // The oldest group (1) was dropped; 7 was never recorded.
        #expect(counter.value == 8)
        manager.removeAllActions()
        #expect(!manager.canRedo)
    }
}

/// A context's changes through its undo manager: per-event groups, relationships with their
/// inverses, deletes with their cascades, saves, rollback and reset.
@Suite struct ContextUndoTests {
    /// A container at a new store, its background context with an undo manager, and the folder.
    static func setUp(_ folder: TemporaryDirectory) throws -> (PersistentContainer, ManagedObjectContext) {
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        context.undoManager = UndoManager()
        return (container, context)
    }

    static func employee(_ name: String, in context: ManagedObjectContext) throws -> Employee {
        let request = Employee.fetchRequest()
        request.predicate = FetchPredicate(key: "name", .equalTo, name)
        return try #require(try context.fetch(request).first)
    }

    @Test func contextsHaveNoUndoManagerByDefault() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        defer { try? container.close() }
        #expect(container.newBackgroundContext().undoManager == nil)
        #expect(ManagedObjectContext(.privateQueue).undoManager == nil)
    }

    @Test func editUndoRedoAcrossRelationshipsAndCascadingDeletes() throws {
        let folder = TemporaryDirectory()
        let (container, context) = try Self.setUp(folder)
        let research = context.performAndWait {
            let research = Department(context: context)
            research.name = "Research"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.salary = 100
            ada.department = research
            return research
        }
        let ada = try context.performAndWait { try Self.employee("Ada", in: context) }
        // Event 2: a raise and a move to a new department.
        let ops = context.performAndWait {
            let ops = Department(context: context)
            ops.name = "Ops"
            ada.salary = 150
            ada.department = ops
            return ops
        }
        try context.performAndWait {
            #expect(research.employees.isEmpty && ops.employees == [ada])
            #expect(context.undoManager!.canUndo)
            context.undo()
            #expect(ada.salary == 100 && ada.department === research)
            #expect(research.employees == [ada])
            #expect(!context.insertedObjects.contains(ops))
            #expect(try context.count(for: Department.fetchRequest()) == 1)
            context.redo()
            #expect(ada.salary == 150 && ada.department === ops && ops.employees == [ada])
            #expect(research.employees.isEmpty && context.insertedObjects.contains(ops))
            try context.save()
        }
        // Deleting Ops cascades to Ada; undo brings both back, with the relationship.
        context.performAndWait { context.delete(ops) }
        try context.performAndWait {
            #expect(ada.isDeleted && ops.isDeleted)
            context.undo()
            #expect(!ada.isDeleted && !ops.isDeleted && context.deletedObjects.isEmpty)
            #expect(ops.employees == [ada] && ada.department === ops)
            #expect(!context.hasChanges)
            context.redo()
            #expect(context.deletedObjects == [ada, ops])
            context.undo()
            try context.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        defer { try? reopened.close() }
        let check = reopened.newBackgroundContext()
        try check.performAndWait {
            let context = check
            let ada = try Self.employee("Ada", in: context)
            #expect(ada.salary == 150 && ada.department?.name == "Ops")
            #expect(try context.count(for: Department.fetchRequest()) == 2)
        }
    }

    @Test func undoAfterSaveMakesTheContextDirtyAgain() throws {
        let folder = TemporaryDirectory()
        let (container, context) = try Self.setUp(folder)
        let ada = try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.salary = 100
            try context.save()
            return ada
        }
        try context.performAndWait {
            ada.salary = 200
            try context.save()
        }
        try context.performAndWait {
            #expect(!context.hasChanges)
            context.undo()
            #expect(ada.salary == 100 && context.hasChanges && context.updatedObjects == [ada])
            try context.save()
            // Undoing the insertion, saved, deletes the object.
            context.undo()
            #expect(ada.isDeleted && context.deletedObjects == [ada])
            try context.save()
            #expect(try context.count(for: Employee.fetchRequest()) == 0)
            // Redoing it inserts the object again, with its saved ID and values.
            context.redo()
            #expect(context.insertedObjects == [ada])
            try context.save()
            context.redo()
            #expect(ada.salary == 200)
            try context.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        defer { try? reopened.close() }
        let check = reopened.newBackgroundContext()
        let salary = try check.performAndWait { try Self.employee("Ada", in: check).salary }
        #expect(salary == 200)
    }

    @Test func undoAfterARefreshStartsFromTheRefreshedState() throws {
        let folder = TemporaryDirectory()
        let (container, context) = try Self.setUp(folder)
        defer { try? container.close() }
        let ada = try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.salary = 100
            try context.save()
            return ada
        }
        context.performAndWait { ada.salary = 200 }
        context.performAndWait { context.refresh(ada, mergeChanges: false) }
        context.performAndWait { ada.salary = 300 }
        context.performAndWait {
            context.undo()
            #expect(ada.salary == 100 && !context.hasChanges)
        }
    }

    @Test func explicitGroupsSpanEventsAndDisabledChangesAreNotRecorded() throws {
        let folder = TemporaryDirectory()
        let (container, context) = try Self.setUp(folder)
        defer { try? container.close() }
        let manager = try #require(context.undoManager)
        let ada = context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            return ada
        }
        context.performAndWait { manager.beginUndoGrouping() }
        context.performAndWait { ada.salary = 1 }
        context.performAndWait { ada.notes = "two events, one group" }
        context.performAndWait { manager.endUndoGrouping() }
        context.performAndWait {
            manager.disableUndoRegistration()
            ada.active = false
        }
        context.performAndWait { manager.enableUndoRegistration() }
        context.performAndWait {
            context.undo()
            #expect(ada.salary == 0 && ada.notes == nil && !ada.active)
            context.undo()
            #expect(!context.hasChanges && !context.registeredObjects.contains(ada))
            #expect(!manager.canUndo)
        }
    }

    @Test func manyToManyAndOrderedRelationshipsUndoThroughASave() throws {
        let folder = TemporaryDirectory()
        try RelationshipTests.withContext(at: folder.store()) { context throws in
            context.undoManager = UndoManager()
            let ann = try RelationshipTests.make("Student", "Ann", in: context)
            let math = try RelationshipTests.make("Course", "Math", in: context)
            let art = try RelationshipTests.make("Course", "Art", in: context)
            let bio = try RelationshipTests.make("Course", "Bio", in: context)
            ann.setValue(Set([math, art]), forKey: "courses")
            let mix = try RelationshipTests.make("Playlist", "Mix", in: context)
            let songs = try ["One", "Two", "Three"].map { try RelationshipTests.make("Song", $0, in: context) }
            mix.setValue(songs, forKey: "songs")
            try context.save()

            ann.setValue(Set([art, bio]), forKey: "courses")
            mix.setValue(Array(songs.reversed()), forKey: "songs")
            context.processPendingChanges()
            context.delete(art)
            context.processPendingChanges()
            #expect(try RelationshipTests.names(ann, "courses") == ["Bio"])
            context.undo()
            #expect(try RelationshipTests.names(ann, "courses") == ["Art", "Bio"])
            #expect(try RelationshipTests.names(art, "students") == ["Ann"])
            context.undo()
            #expect(try RelationshipTests.names(ann, "courses") == ["Art", "Math"])
            #expect(try RelationshipTests.names(bio, "students").isEmpty)
            #expect(try RelationshipTests.names(mix, "songs") == ["One", "Two", "Three"])
            #expect(!context.hasChanges)
            context.redo()
            #expect(try RelationshipTests.names(mix, "songs") == ["Three", "Two", "One"])
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store()) { context throws in
            let ann = try RelationshipTests.fetch("Student", "Ann", in: context)
            #expect(try RelationshipTests.names(ann, "courses") == ["Art", "Bio"])
            let mix = try RelationshipTests.fetch("Playlist", "Mix", in: context)
            #expect(try RelationshipTests.names(mix, "songs") == ["Three", "Two", "One"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Course")) == 3)
        }
    }

    @Test func rollbackAndResetClearTheUndoStack() throws {
        let folder = TemporaryDirectory()
        let (container, context) = try Self.setUp(folder)
        defer { try? container.close() }
        context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
        }
        context.performAndWait {
            #expect(context.undoManager!.canUndo)
            context.rollback()
            #expect(!context.undoManager!.canUndo && !context.hasChanges)
        }
        context.performAndWait {
            let bob = Employee(context: context)
            bob.name = "Bob"
        }
        context.performAndWait {
            context.undo()
            context.reset()
            #expect(!context.undoManager!.canUndo && !context.undoManager!.canRedo)
        }
    }
}
