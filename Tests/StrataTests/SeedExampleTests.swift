import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The "Creating and Saving Managed Objects" guide's example, through the untyped key-value API
/// and through typed subclasses.
@Suite struct SeedExampleTests {
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`, set a value, save, fetch back.
    @Test func guideExampleInsertSaveAndFetchBack() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context) as! Employee
                employee.name = "Ada Lovelace"
                #expect(employee.isInserted)
                #expect(employee.objectID.isTemporaryID)
                #expect(employee.managedObjectContext === context)
                #expect(context.insertedObjects == [employee])
                try context.save()
                #expect(!employee.isInserted)
                #expect(!employee.objectID.isTemporaryID)
                #expect(!context.hasChanges)
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employees = try context.fetch(Employee.fetchRequest())
            #expect(employees.map(\.name) == ["Ada Lovelace"])
            #expect(employees.first?.salary == 0, "the model's default value")
            #expect(employees.first?.active == true, "the model's default value")
            #expect(employees.first?.notes == nil)
            #expect(employees.first?.department == nil)
        }
    }

    @Test func insertNewObjectRejectsUnknownAndAbstractEntities() throws {
        let base = ModelBuilder.entity("Shape", [ModelBuilder.attribute("name", .string)], isAbstract: true)
        let circle = ModelBuilder.entity("Circle", [ModelBuilder.attribute("radius", .double)])
        base.subentities = [circle]
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([base, circle]))
        let context = container.newBackgroundContext()
        context.performAndWait {
            let unknown = #expect(throws: CoreDataError.self) {
                _ = try EntityDescription.insertNewObject(forCheckedEntityName: "Square", into: context)
            }
            #expect(unknown?.code == .coreData)
            let abstract = #expect(throws: CoreDataError.self) {
                _ = try EntityDescription.insertNewObject(forCheckedEntityName: "Shape", into: context)
            }
            #expect(abstract?.code == .coreData)
            let made = EntityDescription.insertNewObject(forEntityName: "Circle", into: context)
            #expect(type(of: made) == ManagedObject.self, "no subclass is registered for Circle")
            #expect(made.entity === circle)
            made.setValue("unit", forKey: "name")
            #expect(made.value(forKey: "name") as? String == "unit", "inherited attribute")
            #expect(context.insertedObjects.count == 1)
        }
        let orphan = ManagedObjectContext(.privateQueue)
        orphan.performAndWait {
            _ = #expect(throws: CoreDataError.self) {
                _ = try EntityDescription.insertNewObject(forCheckedEntityName: "Circle", into: orphan)
            }
        }
    }

    /// `value(forKey:)`, `setValue(_:forKey:)` and the subscript on plain `ManagedObject`s.
    @Test func untypedKeyValueAPIRoundTrips() throws {
        let item = ModelBuilder.entity(
            "Seed",
            [
                ModelBuilder.attribute("title", .string, isOptional: false),
                ModelBuilder.attribute("count16", .integer16, defaultValue: Int16(7)),
                ModelBuilder.attribute("count32", .integer32),
                ModelBuilder.attribute("count64", .integer64),
                ModelBuilder.attribute("ratio", .double),
                ModelBuilder.attribute("weight", .float),
                ModelBuilder.attribute("price", .decimal),
                ModelBuilder.attribute("flag", .boolean),
                ModelBuilder.attribute("when", .date),
                ModelBuilder.attribute("blob", .binaryData),
                ModelBuilder.attribute("identifier", .uuid),
                ModelBuilder.attribute("link", .uri),
            ])
        let owner = ModelBuilder.entity("SeedOwner", [ModelBuilder.attribute("name", .string)])
        let items = ModelBuilder.relationship("items", from: owner, to: item, toMany: true)
        let ownedBy = ModelBuilder.relationship("owner", from: item, to: owner)
        ModelBuilder.inverse(items, ownedBy)
        let model = ModelBuilder.model([item, owner])
        let folder = TemporaryDirectory()
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        let url = URL(string: "https://example.com/seed?x=1")!
        do {
            let container = try GraphModel.container(at: folder.store(), model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let seed = ManagedObject(entity: item, insertInto: context)
                #expect(type(of: seed) == ManagedObject.self)
                #expect(seed.value(forKey: "count16") as? Int16 == 7, "default value")
                #expect(seed["count32"] == nil)
                seed.setValue("first", forKey: "title")
                seed.setValue(12, forKey: "count16")  // an Int literal fits Int16
                seed.setValue(Int64(-40_000), forKey: "count32")
                seed.setValue(UInt8(9), forKey: "count64")
                seed.setValue(Float(0.5), forKey: "ratio")
                seed.setValue(2, forKey: "weight")
                seed.setValue(Decimal(string: "19.99")!, forKey: "price")
                seed.setValue(true, forKey: "flag")
                seed.setValue(date, forKey: "when")
                seed.setValue([UInt8]([1, 2, 3]), forKey: "blob")
                seed.setValue(uuid, forKey: "identifier")
                seed.setValue(url, forKey: "link")
                #expect(seed["count16"] as? Int16 == 12)
                #expect(seed["count32"] as? Int32 == -40_000)
                #expect(seed["count64"] as? Int64 == 9)
                #expect(seed["ratio"] as? Double == 0.5)
                #expect(seed["weight"] as? Float == 2)
                #expect(seed["blob"] as? Data == Data([1, 2, 3]))
                let boss = ManagedObject(entity: owner, insertInto: context)
                boss.setValue("boss", forKey: "name")
                seed.setValue(boss, forKey: "owner")
                #expect(boss.value(forKey: "items") as? Set<ManagedObject> == [seed])
                seed.setValue(nil, forKey: "owner")
                #expect(boss.value(forKey: "items") as? Set<ManagedObject> == [])
                boss.setValue(Set([seed]), forKey: "items")
                #expect(seed["owner"] as? ManagedObject === boss)
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let seeds = try context.fetch(FetchRequest<ManagedObject>(entityName: "Seed"))
            let seed = try #require(seeds.first)
            #expect(seeds.count == 1)
            #expect(seed["title"] as? String == "first")
            #expect(seed["count16"] as? Int16 == 12)
            #expect(seed["count32"] as? Int32 == -40_000)
            #expect(seed["count64"] as? Int64 == 9)
            #expect(seed["ratio"] as? Double == 0.5)
            #expect(seed["weight"] as? Float == 2)
            #expect(seed["price"] as? Decimal == Decimal(string: "19.99")!)
            #expect(seed["flag"] as? Bool == true)
            #expect(seed["when"] as? Date == date)
            #expect(seed["blob"] as? Data == Data([1, 2, 3]))
            #expect(seed["identifier"] as? UUID == uuid)
            #expect(seed["link"] as? URL == url)
            let boss = try #require(seed["owner"] as? ManagedObject)
            #expect(boss["name"] as? String == "boss")
            #expect(boss["items"] as? Set<ManagedObject> == [seed])
        }
    }

    /// An object created without a context, filled, then inserted (Core Data's
    /// `init(entity:insertInto: nil)` followed by `insert(_:)`).
    @Test func objectCreatedWithoutAContextIsSavedOnceInserted() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entity = try #require(container.managedObjectModel.entitiesByName["Department"])
            let loose = ManagedObject(entity: entity, insertInto: nil)
            #expect(loose.managedObjectContext == nil)
            #expect(!loose.isInserted)
            loose.setValue("Loose", forKey: "name")
            #expect(loose.value(forKey: "name") as? String == "Loose")
            #expect(loose.value(forKey: "budget") as? Double == 0, "default value")
            let employee = Employee(context: context)
            employee.name = "Ann"
            let error = #expect(throws: CoreDataError.self) {
                try loose.setValue(Set([employee]), forCheckedKey: "employees")
            }
            #expect(error?.code == .managedObjectReferentialIntegrity, "relationships need a context")
            context.insert(loose)
            #expect(loose.isInserted)
            #expect(loose.managedObjectContext === context)
            loose.setValue(Set([employee]), forKey: "employees")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let names = try reader.performAndWait {
            try reader.fetch(Department.fetchRequest()).map { ($0.name, $0.employees.map(\.name)) }
        }
        #expect(names.count == 1)
        #expect(names.first?.0 == "Loose")
        #expect(names.first?.1 == ["Ann"])
    }

    /// `changedValues()`, `committedValues(forKeys:)`, `hasChanges` and the context's sets as
    /// values change and are saved.
    @Test func changeTrackingThroughTheKeyValueAPI() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("Ann", forKey: "name")
            #expect(employee.committedValues(forKeys: nil).isEmpty, "a new object has no committed values")
            try context.save()
            #expect(employee.changedValues().isEmpty)
            #expect(employee.committedValues(forKeys: ["name"])["name"] as? String == "Ann")
            employee.setValue("Anne", forKey: "name")
            employee.setValue(5, forKey: "salary")
            #expect(Set(employee.changedValues().keys) == ["name", "salary"])
            #expect(employee.changedValues()["name"] as? String == "Anne")
            #expect(employee.committedValues(forKeys: ["name", "salary"])["name"] as? String == "Ann")
            #expect(employee.committedValues(forKeys: ["salary"])["salary"] as? Int64 == 0)
            #expect(employee.isUpdated && employee.hasChanges && employee.hasPersistentChangedValues)
            #expect(context.updatedObjects == [employee])
            try context.save()
            #expect(!employee.hasChanges)
            #expect(employee.committedValues(forKeys: ["name"])["name"] as? String == "Anne")
            context.delete(employee)
            #expect(employee.isDeleted && employee.hasChanges && !employee.isUpdated)
            #expect(context.deletedObjects == [employee])
            try context.save()
            #expect(employee.managedObjectContext == nil, "a saved delete leaves the context")
            #expect(try context.count(for: Employee.fetchRequest()) == 0)
        }
    }

    /// A store opened read-only refuses saves with `persistentStoreSave`; the context keeps its
    /// changes.
    @Test func readOnlyStoresRefuseSaves() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                Department(context: context).name = "Research"
                try context.save()
            }
            try container.close()
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
        let store = try coordinator.addPersistentStore(
            type: .strata, at: folder.store(), options: [PersistentStoreOptionKey.readOnly: true])
        #expect(store.options?[PersistentStoreOptionKey.readOnly] as? Bool == true)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let research = try #require(try context.fetch(Department.fetchRequest()).first)
            #expect(research.name == "Research", "a read-only store reads")
            research.budget = 10
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .persistentStoreSave)
            #expect(context.hasChanges)
            #expect(research.budget == 10)
        }
        try coordinator.remove(store)
    }

    /// An unknown key and a value of the wrong type throw `keyValueValidation` and change nothing.
    @Test func unknownKeysAndWrongTypesThrowAndStoreNothing() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let department = Department(context: context)
            department.name = "Research"
            let employee = Employee(context: context)
            employee.name = "Grace"
            employee.salary = 120_000
            employee.department = department
            try context.save()

            func expectRejected(_ value: Any?, forKey key: String, on object: ManagedObject) {
                let error = #expect(throws: CoreDataError.self, "setting \(key)") {
                    try object.setValue(value, forCheckedKey: key)
                }
                #expect(error?.code == .keyValueValidation, "setting \(key)")
                #expect(error?.key == key)
            }
            expectRejected("x", forKey: "nickname", on: employee)
            expectRejected("lots", forKey: "salary", on: employee)
            expectRejected(1.5, forKey: "salary", on: employee)
            expectRejected(UInt64.max, forKey: "salary", on: employee)
            expectRejected(42, forKey: "name", on: employee)
            expectRejected("yes", forKey: "active", on: employee)
            expectRejected(department, forKey: "name", on: employee)
            expectRejected(employee, forKey: "department", on: employee)
            expectRejected("Research", forKey: "department", on: employee)
            expectRejected(employee, forKey: "employees", on: department)
            #expect(throws: CoreDataError.self) { _ = try employee.value(forCheckedKey: "nickname") }
            let primitive = #expect(throws: CoreDataError.self) {
                try employee.setPrimitiveValue("x", forCheckedKey: "salary")
            }
            #expect(primitive?.code == .keyValueValidation)

            #expect(!employee.hasChanges)
            #expect(!department.hasChanges)
            #expect(employee.changedValues().isEmpty)
            #expect(!context.hasChanges)
            #expect(employee.salary == 120_000)
            #expect(employee.name == "Grace")
            #expect(employee.department === department)
            #expect(department.employees == [employee])
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let fresh = reopened.newBackgroundContext()
        try fresh.performAndWait {
            let employees = try fresh.fetch(Employee.fetchRequest())
            #expect(employees.map(\.name) == ["Grace"])
            #expect(employees.first?.salary == 120_000)
            #expect(employees.first?.department?.name == "Research")
        }
    }

    /// The same graph through typed subclasses: `init(context:)`, `@Managed` properties and
    /// `fetchRequest()`.
    @Test func typedSubclassesRoundTrip() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let sales = Department(context: context)
                sales.name = "Sales"
                sales.budget = 250_000.5
                for (name, salary) in [("Ann", 60_000), ("Bob", 70_000)] {
                    let employee = Employee(context: context)
                    employee.name = name
                    employee.salary = Int64(salary)
                    employee.notes = name == "Bob" ? "part time" : nil
                    employee.active = name == "Ann"
                    employee.department = sales
                }
                #expect(sales.employees.map(\.name).sorted() == ["Ann", "Bob"])
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "name")]
            let employees = try context.fetch(request)
            #expect(employees.map(\.name) == ["Ann", "Bob"])
            #expect(employees.map(\.salary) == [60_000, 70_000])
            #expect(employees.map(\.active) == [true, false])
            #expect(employees.map(\.notes) == [nil, "part time"])
            let sales = try #require(employees.first?.department)
            #expect(sales.name == "Sales")
            #expect(sales.budget == 250_000.5)
            #expect(sales.employees == Set(employees))
            #expect(employees.allSatisfy { $0.department === sales })
        }
    }
}
