import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// An object of a model built in a test, with a uniqueness constraint on `code`.
final class CodedItem: ManagedObject {
    @Managed var code: String
}

/// Child contexts: saves pushed into the parent, fetches and faults through the parent's unsaved
/// state, automatic merging, permanent IDs through the chain, and the patterns apps build on them.
@Suite struct NestedContextTests {
    /// A new private-queue context whose parent is `parent`.
    static func child(
        of parent: ManagedObjectContext, _ type: ManagedObjectContext.ConcurrencyType = .privateQueue
    ) -> ManagedObjectContext {
        let child = ManagedObjectContext(type)
        child.parent = parent
        return child
    }

    /// The names and salaries of the employees stored in `container`, read by a new context.
    static func storedEmployees(_ container: PersistentContainer) throws -> [String: Int64] {
        let reader = container.newBackgroundContext()
        return try reader.performAndWait {
            Dictionary(uniqueKeysWithValues: try reader.fetch(Employee.fetchRequest()).map { ($0.name, $0.salary) })
        }
    }

    @Test func childHasNoCoordinatorOfItsOwnAndAnswersTheRoots() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try ContextLifecycleTests.seededContainer(in: folder)
        let root = container.newBackgroundContext()
        let child = Self.child(of: root)
        let grandchild = Self.child(of: child)
        #expect(grandchild.parent === child)
        #expect(child.parent === root)
        #expect(root.parent == nil)
        #expect(grandchild.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(child.persistentStoreCoordinator === root.persistentStoreCoordinator)
    }

    @Test func childSaveGoesIntoTheParentNotTheStore() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let observer = ContextLifecycleTests.Observer(ManagedObjectContext.didChangeObjectsNotification, of: parent)
        let cyID = try child.performAndWait {
            let research = try #require(try child.existingObject(with: ids["Research"]!) as? Department)
            research.budget = 250
            child.delete(try child.existingObject(with: ids["Bob"]!))
            let cy = Employee(context: child)
            cy.name = "Cy"
            cy.salary = 3000
            cy.department = research
            try child.save()
            #expect(!child.hasChanges)
            #expect(cy.objectID.isTemporaryID, "a child save gives no permanent IDs")
            return cy.objectID
        }
        #expect(try Self.storedEmployees(container) == ["Ann": 1000, "Bob": 1000], "nothing reached the store")
        try parent.performAndWait {
            #expect(parent.hasChanges)
            let cy = try #require(parent.registeredObject(for: cyID) as? Employee)
            #expect(parent.insertedObjects == [cy])
            #expect(cy.name == "Cy")
            let research = try #require(parent.registeredObject(for: ids["Research"]!) as? Department)
            #expect(parent.updatedObjects.contains(research))
            #expect(research.budget == 250)
            #expect(research.changedValues()["budget"] as? Double == 250, "the parent has the change as its own")
            #expect(Set(research.employees.map(\.name)) == ["Ann", "Cy"])
            #expect(parent.deletedObjects.map(\.objectID) == [ids["Bob"]!])
        }
        let posted = observer.posts.current
        #expect(posted.contains { $0["inserted"] == [cyID] }, "the parent posts its objects-did-change notification")
        try parent.performAndWait { try parent.save() }
        #expect(try Self.storedEmployees(container) == ["Ann": 1000, "Cy": 3000])
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(try reader.existingObject(with: ids["Research"]!) as? Department)
            #expect(research.budget == 250)
            #expect(Set(research.employees.map(\.name)) == ["Ann", "Cy"])
        }
    }

    @Test func childFetchesSeeTheParentsUnsavedChangesAndTheirOwn() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let grandchild = Self.child(of: child)
        try parent.performAndWait {
            let research = try parent.existingObject(with: ids["Research"]!) as! Department
            (try parent.existingObject(with: ids["Ann"]!) as! Employee).salary = 3000
            parent.delete(try parent.existingObject(with: ids["Bob"]!))
            let cy = Employee(context: parent)
            cy.name = "Cy"
            cy.salary = 5000
            cy.department = research
        }
        let rich = Employee.fetchRequest()
        rich.predicate = try FetchPredicate(checkedFormat: "salary > %@", 2000)
        rich.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: true)]
        try child.performAndWait {
            #expect(
                try child.fetch(Employee.fetchRequest()).map(\.name).sorted() == ["Ann", "Cy"],
                "the parent's delete hides Bob")
            #expect(try child.fetch(rich).map(\.name) == ["Ann", "Cy"])
            #expect(try child.count(for: rich) == 2)
            let dee = Employee(context: child)
            dee.name = "Dee"
            dee.salary = 4000
            #expect(try child.fetch(rich).map(\.name) == ["Ann", "Dee", "Cy"])
            let research = Department.fetchRequest()
            research.predicate = try FetchPredicate(checkedFormat: "ANY employees.name == %@", "Cy")
            #expect(try child.fetch(research).map(\.name) == ["Research"], "relationships see the parent's insert")
            try child.save()
        }
        try grandchild.performAndWait {
            #expect(try grandchild.fetch(rich).map(\.name) == ["Ann", "Dee", "Cy"], "changes up the chain")
            grandchild.delete(try #require(try grandchild.fetch(rich).first))
            #expect(try grandchild.fetch(rich).map(\.name) == ["Dee", "Cy"])
            #expect(try grandchild.count(for: Employee.fetchRequest()) == 2)
        }
        #expect(try Self.storedEmployees(container) == ["Ann": 1000, "Bob": 1000], "nothing was saved")
    }

    @Test func childFaultsAreFulfilledFromTheParentsCurrentState() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let cyID = try parent.performAndWait {
            let research = try parent.existingObject(with: ids["Research"]!) as! Department
            research.budget = 777
            let cy = Employee(context: parent)
            cy.name = "Cy"
            cy.department = research
            parent.delete(try parent.existingObject(with: ids["Bob"]!))
            return cy.objectID
        }
        let research = try child.performAndWait {
            let research = try #require(child.object(with: ids["Research"]!) as? Department)
            #expect(research.isFault)
            #expect(research.budget == 777, "the parent's unsaved value")
            #expect(!research.hasChanges)
            #expect(Set(research.employees.map(\.name)) == ["Ann", "Cy"], "the parent's to-many relationship")
            let cy = try #require(try child.existingObject(with: cyID) as? Employee)
            #expect(cy.name == "Cy", "an object the parent inserted, by its temporary ID")
            #expect(cy.department === research)
            #expect(throws: CoreDataError.self) { try child.existingObject(with: ids["Bob"]!) }
            return research
        }
        try parent.performAndWait {
            (try parent.existingObject(with: ids["Research"]!) as! Department).budget = 888
        }
        child.performAndWait {
            #expect(research.budget == 777, "a realized object keeps its values")
            child.refresh(research, mergeChanges: false)
            #expect(research.budget == 888, "a refreshed one reads the parent again")
        }
    }

    @Test func deleteInChildCascadesThroughTheParentToTheStore() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        try child.performAndWait {
            child.delete(try child.existingObject(with: ids["Research"]!))
            try child.save()
        }
        try parent.performAndWait {
            #expect(
                Set(parent.deletedObjects.map(\.objectID)) == [ids["Research"]!, ids["Ann"]!, ids["Bob"]!],
                "the cascade came with the save")
            let names = try parent.fetch(Employee.fetchRequest()).map(\.name)
            #expect(names.isEmpty)
            try parent.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        #expect(try Self.storedEmployees(reopened).isEmpty)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.fetch(Department.fetchRequest()).map(\.name) == ["Sales"])
        }
    }

    @Test func relationshipEditsInChildReachTheParentAndTheStore() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        try child.performAndWait {
            let ann = try child.existingObject(with: ids["Ann"]!) as! Employee
            let sales = try child.existingObject(with: ids["Sales"]!) as! Department
            ann.department = sales
            try child.save()
        }
        try parent.performAndWait {
            let ann = try parent.existingObject(with: ids["Ann"]!) as! Employee
            let sales = try parent.existingObject(with: ids["Sales"]!) as! Department
            let research = try parent.existingObject(with: ids["Research"]!) as! Department
            #expect(ann.department === sales)
            #expect(sales.employees.map(\.name) == ["Ann"])
            #expect(research.employees.map(\.name) == ["Bob"])
            try parent.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let sales = try reader.existingObject(with: ids["Sales"]!) as! Department
            let research = try reader.existingObject(with: ids["Research"]!) as! Department
            #expect(sales.employees.map(\.name) == ["Ann"])
            #expect(research.employees.map(\.name) == ["Bob"])
        }
    }

    @Test func grandchildSavesUpTheChainToDiskAndReopen() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let root = container.newBackgroundContext()
        let middle = Self.child(of: root)
        let leaf = Self.child(of: middle)
        middle.retainsRegisteredObjects = true
        let opsID = try leaf.performAndWait {
            let ops = Department(context: leaf)
            ops.name = "Ops"
            ops.budget = 9
            let eve = Employee(context: leaf)
            eve.name = "Eve"
            eve.salary = 10
            eve.department = ops
            (try leaf.existingObject(with: ids["Ann"]!) as! Employee).department = ops
            try leaf.save()
            return ops.objectID
        }
        try middle.performAndWait {
            #expect(middle.insertedObjects.count == 2)
            let ops = try #require(middle.registeredObject(for: opsID) as? Department)
            #expect(Set(ops.employees.map(\.name)) == ["Ann", "Eve"])
            try middle.save()
        }
        #expect(try Self.storedEmployees(container) == ["Ann": 1000, "Bob": 1000])
        let permanent = try root.performAndWait {
            let ops = try #require(root.registeredObject(for: opsID))
            try root.save()
            #expect(!ops.objectID.isTemporaryID, "the root's save gives permanent IDs")
            return ops.objectID
        }
        try middle.performAndWait {
            let ops = try #require(middle.registeredObject(for: opsID) as? Department)
            #expect(ops.objectID.isTemporaryID, "a child keeps the temporary IDs, as in Core Data")
            ops.budget = 11
            try middle.save()
        }
        try root.performAndWait {
            let ops = try #require(root.registeredObject(for: permanent) as? Department)
            #expect(ops.budget == 11, "a later save of the child finds the object by its old ID")
            try root.save()
        }
        try leaf.performAndWait {
            let ops = try #require(try leaf.existingObject(with: opsID) as? Department)
            #expect(ops.budget == 11, "a temporary ID still names the object up the chain")
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let ops = try #require(try reader.existingObject(with: permanent) as? Department)
            #expect(ops.name == "Ops")
            #expect(ops.budget == 11)
            #expect(Set(ops.employees.map(\.name)) == ["Ann", "Eve"])
        }
    }

    @Test func permanentIDsObtainedInAChildAreUsedByTheParent() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let (early, late) = try child.performAndWait {
            let early = Department(context: child)
            early.name = "Early"
            try child.save()
            let late = Department(context: child)
            late.name = "Late"
            try child.obtainPermanentIDs(for: [early, late])
            #expect(!early.objectID.isTemporaryID)
            #expect(!late.objectID.isTemporaryID)
            try child.save()
            return (early.objectID, late.objectID)
        }
        try parent.performAndWait {
            let early = try #require(
                parent.registeredObject(for: early), "the parent's object took the child's permanent ID")
            let late = try #require(parent.registeredObject(for: late))
            #expect(early.isInserted && late.isInserted)
            try parent.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws -> Void in
            #expect((try reader.existingObject(with: early) as! Department).name == "Early")
            #expect((try reader.existingObject(with: late) as! Department).name == "Late")
        }
    }

    @Test func validationRunsOnChildSaveAndConstraintsAtTheRoot() throws {
        let folder = TemporaryDirectory()
        let code = ModelBuilder.attribute("code", .string, isOptional: false)
        let item = ModelBuilder.entity("CodedItem", [code], className: "CodedItem")
        CodedItem.register(for: "CodedItem")
        item.uniquenessConstraints = [["code"]]
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([item]))
        let root = container.newBackgroundContext()
        let child = Self.child(of: root)
        try child.performAndWait {
            let nameless = CodedItem(entity: item, insertInto: child)
            let error = try #require(throws: CoreDataError.self) { try child.save() }
            #expect(error.code == .validationMissingMandatoryProperty)
            #expect(child.insertedObjects == [nameless], "the child keeps its changes")
            nameless.code = "A"
            CodedItem(entity: item, insertInto: child).code = "A"
            try child.save()
        }
        try root.performAndWait {
            #expect(root.insertedObjects.count == 2, "constraints are not checked on a child save")
            let error = try #require(throws: CoreDataError.self) { try root.save() }
            #expect(error.code == .managedObjectConstraintMerge)
            #expect(root.insertedObjects.count == 2)
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws -> Void in
            #expect(
                try reader.count(for: FetchRequest<ManagedObject>(entityName: "CodedItem")) == 0, "nothing was stored")
        }
    }

    /// Core Data's scratch pad: an editor context, child of the view context, whose edits are
    /// saved into the view context or thrown away.
    @Test(.waitsOnQueues) func scratchPadEditorSavesOrDiscards() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let view = container.viewContext
        let annID = ids["Ann"]!
        let discarded = Self.child(of: view, .mainQueue)
        try discarded.performAndWait {
            let ann = try discarded.existingObject(with: annID) as! Employee
            ann.name = "Ann (draft)"
            ann.salary = 1
            discarded.rollback()
            #expect(ann.name == "Ann")
        }
        let editor = Self.child(of: view, .mainQueue)
        try editor.performAndWait {
            let ann = try editor.existingObject(with: annID) as! Employee
            ann.salary = 2500
            let note = Employee(context: editor)
            note.name = "Zed"
            note.department = ann.department
        }
        try view.performAndWait { () throws -> Void in
            #expect(!view.hasChanges, "nothing leaves the editor before it saves")
            #expect((try view.existingObject(with: annID) as! Employee).salary == 1000)
        }
        try editor.performAndWait { try editor.save() }
        try view.performAndWait {
            #expect(view.hasChanges)
            #expect((try view.existingObject(with: annID) as! Employee).salary == 2500)
            try view.save()
        }
        #expect(try Self.storedEmployees(container) == ["Ann": 2500, "Bob": 1000, "Zed": 0])
    }

    /// The view context merges what background contexts save; imports run in a background
    /// context or in a child of the view context.
    @Test(.waitsOnQueues) func viewContextMergesBackgroundImports() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let view = container.viewContext
        view.automaticallyMergesChangesFromParent = true
        let budget = try view.performAndWait {
            view.retainsRegisteredObjects = true
            return (try view.existingObject(with: ids["Research"]!) as! Department).budget
        }
        #expect(budget == 100)
        let background = container.newBackgroundContext()
        try background.performAndWait {
            let research = try background.existingObject(with: ids["Research"]!) as! Department
            research.budget = 400
            for index in 0..<3 {
                let hire = Employee(context: background)
                hire.name = "Hire \(index)"
                hire.department = research
            }
            background.delete(try background.existingObject(with: ids["Bob"]!))
            try background.save()
        }
        await view.perform {}
        try view.performAndWait {
            let research = try #require(view.registeredObject(for: ids["Research"]!) as? Department)
            #expect(research.budget == 400, "the view context merged the background save")
            #expect(Set(research.employees.map(\.name)) == ["Ann", "Hire 0", "Hire 1", "Hire 2"])
            #expect(view.registeredObject(for: ids["Bob"]!) == nil)
            #expect(!view.hasChanges)
        }
        // An import in a child of the view context, saved through the view context.
        let importer = Self.child(of: view)
        let editorOfView = Self.child(of: view)
        editorOfView.automaticallyMergesChangesFromParent = true
        let sales = try editorOfView.performAndWait {
            #expect((try editorOfView.existingObject(with: ids["Research"]!) as! Department).budget == 400)
            let sales = try editorOfView.existingObject(with: ids["Sales"]!) as! Department
            #expect(sales.budget == 50)
            #expect(sales.employees.isEmpty)
            return sales
        }
        // Saved from the main thread, as a user interface does: the save reaches the view
        // context on the main queue without waiting for it.
        try await MainActor.run {
            try importer.performAndWait {
                let sales = try importer.existingObject(with: ids["Sales"]!) as! Department
                sales.budget = 60
                let hire = Employee(context: importer)
                hire.name = "Imported"
                hire.department = sales
                try importer.save()
            }
        }
        try view.performAndWait {
            #expect(view.hasChanges)
            try view.save()
        }
        editorOfView.performAndWait {}
        editorOfView.performAndWait {
            #expect(sales.budget == 60, "the view context's save was merged")
            #expect(sales.employees.map(\.name) == ["Imported"])
        }
        let stored = try Self.storedEmployees(container)
        #expect(stored.keys.sorted() == ["Ann", "Hire 0", "Hire 1", "Hire 2", "Imported"])
    }

    @Test func childMergesItsParentsSavesWhenAsked() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        child.automaticallyMergesChangesFromParent = true
        let research = try child.performAndWait {
            child.retainsRegisteredObjects = true
            return try child.existingObject(with: ids["Research"]!) as! Department
        }
        // The parent saves an object the child inserted: the child takes its permanent ID.
        let (opsID, bobID) = try child.performAndWait {
            let ops = Department(context: child)
            ops.name = "Ops"
            try child.save()
            return (ops.objectID, ids["Bob"]!)
        }
        try parent.performAndWait {
            (try parent.existingObject(with: ids["Research"]!) as! Department).budget = 123
            parent.delete(try parent.existingObject(with: bobID))
            try parent.save()
        }
        try child.performAndWait {
            #expect(research.budget == 123)
            #expect(child.registeredObject(for: bobID) == nil)
            let ops = try #require(child.registeredObjects.first { ($0 as? Department)?.name == "Ops" })
            #expect(ops.objectID != opsID)
            #expect(!ops.objectID.isTemporaryID, "a merging child takes the permanent IDs")
        }
    }

    @Test func childUpdateOfAnObjectTheParentDeletedFailsAndLosesNothing() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let bob = try child.performAndWait { try child.existingObject(with: ids["Bob"]!) as! Employee }
        try parent.performAndWait { parent.delete(try parent.existingObject(with: ids["Bob"]!)) }
        try child.performAndWait {
            bob.salary = 5
            (try child.existingObject(with: ids["Ann"]!) as! Employee).salary = 6
            let error = try #require(throws: CoreDataError.self) { try child.save() }
            #expect(error.code == .managedObjectMerge)
            #expect(error.objectID == ids["Bob"]!)
            #expect(child.updatedObjects.count == 2, "the child keeps its changes")
        }
        parent.performAndWait {
            #expect(parent.deletedObjects.map(\.objectID) == [ids["Bob"]!])
            #expect(
                parent.updatedObjects.map(\.objectID) == [ids["Research"]!],
                "its own nullify only: nothing of the failed save")
            #expect(parent.insertedObjects.isEmpty)
        }
    }

    @Test func childPrefetchesAndBatchesThroughTheParent() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        try parent.performAndWait {
            (try parent.existingObject(with: ids["Ann"]!) as! Employee).name = "Ann P"
        }
        try child.performAndWait {
            let departments = Department.fetchRequest()
            departments.predicate = try FetchPredicate(checkedFormat: "name == %@", "Research")
            departments.relationshipKeyPathsForPrefetching = ["employees"]
            let research = try #require(try child.fetch(departments).first)
            #expect(
                Set(research.employees.map(\.name)) == ["Ann P", "Bob"], "prefetched objects have the parent's state")
            let employees = Employee.fetchRequest()
            employees.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
            employees.fetchBatchSize = 1
            #expect(try child.fetchBatched(employees).map(\.name) == ["Ann P", "Bob"])
        }
    }

    @Test func automaticMergingSetBeforeTheCoordinator() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let context = ManagedObjectContext(.privateQueue)
        context.automaticallyMergesChangesFromParent = true
        context.persistentStoreCoordinator = container.persistentStoreCoordinator
        let sales = try context.performAndWait { try context.existingObject(with: ids["Sales"]!) as! Department }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            (try other.existingObject(with: ids["Sales"]!) as! Department).budget = 75
            try other.save()
        }
        context.performAndWait {
            #expect(sales.budget == 75)
        }
        context.automaticallyMergesChangesFromParent = false
        try other.performAndWait {
            (try other.existingObject(with: ids["Sales"]!) as! Department).budget = 80
            try other.save()
        }
        context.performAndWait {
            #expect(sales.budget == 75, "no merge once turned off")
        }
    }

    /// A child used from inside a block of its parent runs there: its save, which runs on the
    /// parent's queue, does not wait for the queue the thread already holds.
    @Test(.waitsOnQueues) func childUsedInsideItsParentsBlock() async throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let changed = try parent.performAndWait {
            try child.performAndWait {
                (try child.existingObject(with: ids["Ann"]!) as! Employee).salary = 1500
                try child.save()
            }
            return (try parent.existingObject(with: ids["Ann"]!) as! Employee).salary
        }
        #expect(changed == 1500)
        let saved = try await parent.perform {
            try child.performAndWait {
                (try child.existingObject(with: ids["Bob"]!) as! Employee).salary = 1600
                try child.save()
            }
            try parent.save()
            return parent.hasChanges
        }
        #expect(!saved)
        #expect(try Self.storedEmployees(container) == ["Ann": 1500, "Bob": 1600])
    }

    @Test func childDeleteOfAnObjectItsParentForgotChangesNothing() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        let ops = try child.performAndWait {
            let ops = Department(context: child)
            ops.name = "Ops"
            try child.save()
            return ops
        }
        parent.performAndWait { parent.rollback() }
        try child.performAndWait {
            child.delete(ops)
            try child.save()
        }
        try parent.performAndWait {
            #expect(!parent.hasChanges)
            try parent.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.fetch(Department.fetchRequest()).map(\.name).sorted() == ["Research", "Sales"])
        }
    }

    /// A child's change saved into its parent meets a conflicting save of another context when
    /// the root saves: the root's merge policy decides, and a refused save loses nothing.
    @Test func conflictsOfAChildsChangesAreResolvedWhenTheRootSaves() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try ContextLifecycleTests.seededContainer(in: folder)
        let parent = container.newBackgroundContext()
        let child = Self.child(of: parent)
        try child.performAndWait {
            (try child.existingObject(with: ids["Ann"]!) as! Employee).salary = 1100
            try child.save()
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            (try other.existingObject(with: ids["Ann"]!) as! Employee).salary = 1200
            try other.save()
        }
        try parent.performAndWait {
            let error = try #require(throws: CoreDataError.self) { try parent.save() }
            #expect(error.code == .managedObjectMerge)
            #expect(
                (try parent.existingObject(with: ids["Ann"]!) as! Employee).salary == 1100, "the child's change is kept"
            )
            parent.mergePolicy = .mergeByPropertyObjectTrump
            try parent.save()
        }
        #expect(try Self.storedEmployees(container)["Ann"] == 1100)
    }
}
