import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `value(forKey:)`, `setValue(_:forKey:)` and their relatives as Core Data has them: they do not
/// throw, a value of the wrong type fails the save naming the object and key, an unknown key
/// stops the program, and the `forChecked…` variants throw instead.
@Suite struct KeyValueCodingTests {
    @Test func aValueOfTheWrongTypeFailsTheSaveAndLosesNothing() throws {
        let folder = TemporaryDirectory()
        let adaID: ManagedObjectID
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            adaID = try context.performAndWait {
                let ada = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                ada.setValue("Ada", forKey: "name")
                ada.setValue(100, forKey: "salary")
                #expect(ada.value(forKey: "salary") as? Int64 == 100, "numbers take the attribute's type")
                try context.save()

                ada.setValue("a lot", forKey: "salary")
                #expect(ada.value(forKey: "salary") as? String == "a lot", "the value is kept as set")
                let grace = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                grace.setValue("Grace", forKey: "name")
                grace.setValue(Date(), forKey: "active")

                let error = #expect(throws: CoreDataError.self) { try context.save() }
                #expect(error?.code == .validationMultipleErrors)
                let details = error?.detailedErrors ?? []
                #expect(Set(details.map(\.code)) == [.managedObjectValidation])
                #expect(Set(details.compactMap(\.key)) == ["salary", "active"])
                #expect(Set(details.compactMap(\.objectID)) == [ada.objectID, grace.objectID])
                #expect(details.first { $0.key == "salary" }?.message.contains("Employee.salary") == true)
                #expect(throws: CoreDataError.self) { try ada.validateForUpdate() }
                #expect(throws: CoreDataError.self) { try grace.validateForInsert() }

                // Nothing was lost: the context keeps both changes, and a fix saves.
                #expect(context.insertedObjects == [grace])
                #expect(context.updatedObjects == [ada])
                ada.setValue(Int64(150), forKey: "salary")
                grace.setValue(false, forKey: "active")
                try context.save()
                return ada.objectID
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try context.existingObject(with: adaID)
            #expect(ada.value(forKey: "salary") as? Int64 == 150)
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", "Grace")
            #expect(try context.fetch(request).first?.value(forKey: "active") as? Bool == false)
        }
    }

    @Test func aFailedSaveLeavesTheStoredRowAsItWas() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let writer = container.newBackgroundContext()
        let id = try writer.performAndWait {
            let ada = EntityDescription.insertNewObject(forEntityName: "Employee", into: writer)
            ada.setValue("Ada", forKey: "name")
            ada.setValue(7, forKey: "salary")
            try writer.save()
            ada.setValue(["not", "a", "number"], forKey: "salary")
            #expect(throws: CoreDataError.self) { try writer.save() }
            #expect(writer.hasChanges)
            return ada.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let ada = try reader.existingObject(with: id)
            #expect(ada.value(forKey: "salary") as? Int64 == 7)
        }
    }

    @Test func checkedVariantsThrowAndChangeNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            ada.setValue("Ada", forKey: "name")
            try context.save()
            let unknown = #expect(throws: CoreDataError.self) { try ada.value(forCheckedKey: "nickname") }
            #expect(unknown?.code == .keyValueValidation)
            #expect(unknown?.message.contains("Employee") == true)
            #expect(throws: CoreDataError.self) { try ada.setValue("x", forCheckedKey: "salary") }
            #expect(throws: CoreDataError.self) { try ada.setPrimitiveValue(1, forCheckedKey: "nickname") }
            #expect(throws: CoreDataError.self) { try ada.primitiveValue(forCheckedKey: "nickname") }
            #expect(throws: CoreDataError.self) { try ada.mutableSetValue(forCheckedKey: "name") }
            #expect(throws: CoreDataError.self) { try ada.mutableOrderedSetValue(forCheckedKey: "department") }
            #expect(throws: CoreDataError.self) {
                try EntityDescription.insertNewObject(forCheckedEntityName: "Robot", into: context)
            }
            #expect(!context.hasChanges)
            try ada.setValue(Int32(9), forCheckedKey: "salary")
            #expect(try ada.value(forCheckedKey: "salary") as? Int64 == 9)
            #expect(try ada.primitiveValue(forCheckedKey: "name") as? String == "Ada")
        }
    }

    @Test func unknownKeyStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let entity = EntityDescription(
                name: "Item", properties: [AttributeDescription(name: "title", type: .string)])
            let object = ManagedObject(entity: entity, insertInto: nil)
            _ = object.value(forKey: "nope")
        }
        await #expect(processExitsWith: .failure) {
            let entity = EntityDescription(
                name: "Item", properties: [AttributeDescription(name: "title", type: .string)])
            ManagedObject(entity: entity, insertInto: nil).setValue(1, forKey: "nope")
        }
    }

    @Test func relationshipsThroughMutableSetsAndTheSubscript() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let research = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                research["name"] = "Research"
                let employees = research.mutableSetValue(forKey: "employees")
                for name in ["Ada", "Grace", "Edsger"] {
                    let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                    employee["name"] = name
                    employees.add(employee)
                    #expect(employee["department"] as? ManagedObject === research, "the inverse is set")
                }
                let edsger = try #require(employees.allObjects.first { $0["name"] as? String == "Edsger" })
                employees.remove(edsger)
                #expect(employees.count == 2)
                #expect(!employees.contains(edsger))
                #expect(research.objectIDs(forRelationshipNamed: "employees").count == 2)
                #expect(!research.hasFault(forRelationshipNamed: "employees"))
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).first)
            let names = (research.value(forKey: "employees") as? Set<ManagedObject>)?.compactMap {
                $0.value(forKey: "name") as? String
            }
            #expect(Set(names ?? []) == ["Ada", "Grace"])
            research.mutableSetValue(forKey: "employees").removeAllObjects()
            try context.save()
            #expect(research.objectIDs(forRelationshipNamed: "employees").isEmpty)
        }
    }

    /// Defaults set in code as Core Data users do (`defaultValue = 0`, an `NSNumber`, a `Double`
    /// for a `Decimal`) take the attribute's type and survive a save and reopen.
    @Test func defaultsSetInCodeTakeTheAttributesType() throws {
        func model() -> ManagedObjectModel {
            ModelBuilder.model([
                ModelBuilder.entity(
                    "Account",
                    [
                        ModelBuilder.attribute("salary", .integer64, defaultValue: 0),
                        ModelBuilder.attribute("level", .integer16, defaultValue: NSNumber(value: 3)),
                        ModelBuilder.attribute("rate", .decimal, defaultValue: 1.5),
                        ModelBuilder.attribute("ratio", .double, defaultValue: 2),
                        ModelBuilder.attribute("score", .float, defaultValue: NSNumber(value: 0.5)),
                        ModelBuilder.attribute("enabled", .boolean, defaultValue: 1),
                    ])
            ])
        }
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let account = EntityDescription.insertNewObject(forEntityName: "Account", into: context)
                #expect(account.value(forKey: "salary") as? Int64 == 0)
                #expect(account.value(forKey: "level") as? Int16 == 3)
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let account = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Account")).first)
            #expect(account.value(forKey: "salary") as? Int64 == 0)
            #expect(account.value(forKey: "level") as? Int16 == 3)
            #expect(account.value(forKey: "rate") as? Decimal == Decimal(string: "1.5"))
            #expect(account.value(forKey: "ratio") as? Double == 2)
            #expect(account.value(forKey: "score") as? Float == 0.5)
            #expect(account.value(forKey: "enabled") as? Bool == true)
        }
    }
}
