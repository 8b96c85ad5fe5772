import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `fetch(_:)`: the four rules of the NSManagedObjectContext reference, sorting, limits, result
/// types, sub-entities and predicates.
@Suite struct FetchRuleTests {
    /// The saved employees: name, salary, active, notes, department.
    static let people: [(name: String, salary: Int64, active: Bool, notes: String?, department: String?)] = [
        ("alice", 50_000, true, nil, "Research"),
        ("Bob", 70_000, false, "remote", "Research"),
        ("carol", 90_000, true, "lead", "Sales"),
        ("Dave", 110_000, true, nil, "Sales"),
        ("erin", 130_000, false, "new", nil),
    ]

    /// A container with Research and Sales and the five people saved; returns the IDs by name.
    static func seeded(_ folder: TemporaryDirectory) throws -> (PersistentContainer, [String: ManagedObjectID]) {
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait {
            var objects: [String: ManagedObject] = [:]
            for name in ["Research", "Sales"] {
                let department = Department(context: context)
                department.name = name
                objects[name] = department
            }
            for person in people {
                let employee = Employee(context: context)
                employee.name = person.name
                employee.salary = person.salary
                employee.active = person.active
                employee.notes = person.notes
                employee.department = person.department.map { objects[$0] as! Department }
                objects[person.name] = employee
            }
            try context.save()
            return objects.mapValues(\.objectID)
        }
        return (container, ids)
    }

    /// An employee request with `predicate`, sorted by name (case-insensitively).
    static func request(_ predicate: FetchPredicate? = nil, pending: Bool = true) -> FetchRequest<Employee> {
        let request = Employee.fetchRequest()
        request.predicate = predicate
        request.includesPendingChanges = pending
        request.sortDescriptors = [FetchSortDescriptor(key: "name", caseInsensitive: true)]
        return request
    }

    /// The names `request` fetches in `context`.
    static func names(_ request: FetchRequest<Employee>, in context: ManagedObjectContext) throws -> [String] {
        try context.fetch(request).map(\.name)
    }

    @Test func pendingInsertsThatMatchAreFetched() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let frank = Employee(context: context)
            frank.name = "frank"
            frank.salary = 200_000
            let gina = Employee(context: context)
            gina.name = "gina"
            gina.salary = 1
            let rich = FetchPredicate(key: "salary", .greaterThan, 100_000)
            let withPending = try Self.names(Self.request(rich), in: context)
            let withoutPending = try Self.names(Self.request(rich, pending: false), in: context)
            #expect(withPending == ["Dave", "erin", "frank"])
            #expect(withoutPending == ["Dave", "erin"])
            #expect(try context.fetch(Self.request(rich)).last === frank)
            let counted = try context.count(for: Self.request(rich))
            let countedWithout = try context.count(for: Self.request(rich, pending: false))
            #expect(counted == 3)
            #expect(countedWithout == 2)
            let all = try context.count(for: Self.request())
            #expect(all == 7)
        }
    }

    /// A changed object is matched on its in-memory values: it is fetched when they match and
    /// not when only the stored ones do (with pending changes; the other way round without).
    @Test func changedObjectsAreMatchedOnTheirInMemoryState() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let alice = try #require(try context.existingObject(with: ids["alice"]!) as? Employee)
            let dave = try #require(try context.existingObject(with: ids["Dave"]!) as? Employee)
            alice.salary = 150_000
            dave.salary = 10_000
            let rich = FetchPredicate(key: "salary", .greaterThan, 100_000)
            let withPending = try Self.names(Self.request(rich), in: context)
            let withoutPending = try Self.names(Self.request(rich, pending: false), in: context)
            #expect(withPending == ["alice", "erin"])
            #expect(withoutPending == ["Dave", "erin"])
            #expect(dave.salary == 10_000, "matched on the store, returned with its in-memory values")
            let counted = try context.count(for: Self.request(rich))
            #expect(counted == 2)
            // A change through a relationship counts too.
            let research = try #require(try context.existingObject(with: ids["Research"]!) as? Department)
            let erin = try #require(try context.existingObject(with: ids["erin"]!) as? Employee)
            erin.department = research
            let inResearch = try Self.names(
                Self.request(FetchPredicate(key: "department.name", .equalTo, "Research")), in: context)
            #expect(inResearch == ["alice", "Bob", "erin"])
            let storedResearch = try Self.names(
                Self.request(FetchPredicate(key: "department", .equalTo, research), pending: false), in: context)
            #expect(storedResearch == ["alice", "Bob"])
        }
    }

    @Test func pendingDeletesAreNotFetched() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.delete(try context.existingObject(with: ids["carol"]!))
            let withPending = try Self.names(Self.request(), in: context)
            let withoutPending = try Self.names(Self.request(pending: false), in: context)
            #expect(withPending == ["alice", "Bob", "Dave", "erin"])
            #expect(withoutPending == ["alice", "Bob", "carol", "Dave", "erin"], "the store still has carol")
            context.delete(try context.existingObject(with: ids["Sales"]!))
            context.processPendingChanges()
            let afterCascade = try Self.names(Self.request(), in: context)
            #expect(afterCascade == ["alice", "Bob", "erin"], "the cascade's deletes are pending too")
            let counted = try context.count(for: Self.request())
            #expect(counted == 3)
            let inserted = Employee(context: context)
            inserted.name = "zoe"
            context.delete(inserted)
            let afterForgotten = try Self.names(Self.request(), in: context)
            #expect(afterForgotten == ["alice", "Bob", "erin"], "a deleted insert is gone")
        }
    }

    /// A fetch never overwrites the values of objects already realized in the context.
    @Test func realizedObjectsAreNeverOverwrittenByAFetch() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seeded(folder)
        let mine = container.newBackgroundContext()
        let theirs = container.newBackgroundContext()
        let (alice, bob) = try mine.performAndWait {
            let everyone = try mine.fetch(Self.request())
            let bob = try #require(everyone.first { $0.name == "Bob" })
            bob.notes = "mine"
            return (try #require(everyone.first { $0.name == "alice" }), bob)
        }
        try theirs.performAndWait {
            let alice = try #require(try theirs.existingObject(with: ids["alice"]!) as? Employee)
            alice.salary = 55_000
            alice.notes = "theirs"
            let bob = try #require(try theirs.existingObject(with: ids["Bob"]!) as? Employee)
            bob.salary = 1
            try theirs.save()
        }
        try mine.performAndWait {
            for pending in [true, false] {
                let again = try mine.fetch(Self.request(pending: pending))
                #expect(again.first { $0.name == "alice" } === alice)
                #expect(alice.salary == 50_000, "the realized object keeps the values it had")
                #expect(alice.notes == nil)
                #expect(bob.notes == "mine")
                #expect(bob.salary == 70_000)
            }
            mine.refresh(alice, mergeChanges: false)
            _ = try mine.fetch(Self.request())
            #expect(alice.salary == 55_000, "after a refresh the stored values come in")
            #expect(alice.notes == "theirs")
        }
    }

    @Test func sortDescriptorsOrderByEveryKey() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws -> Void in
            let request = Employee.fetchRequest()
            func sorted(_ descriptors: [FetchSortDescriptor]) throws -> [String] {
                request.sortDescriptors = descriptors
                return try context.fetch(request).map(\.name)
            }
            #expect(try sorted([FetchSortDescriptor(key: "name")]) == ["Bob", "Dave", "alice", "carol", "erin"])
            #expect(
                try sorted([FetchSortDescriptor(key: "name", caseInsensitive: true)]) == [
                    "alice", "Bob", "carol", "Dave", "erin",
                ])
            #expect(
                try sorted([FetchSortDescriptor(key: "name", ascending: false, caseInsensitive: true)]) == [
                    "erin", "Dave", "carol", "Bob", "alice",
                ])
            #expect(
                try sorted([FetchSortDescriptor(key: "salary", ascending: false)]) == [
                    "erin", "Dave", "carol", "Bob", "alice",
                ])
            #expect(
                try sorted([FetchSortDescriptor(key: "active", ascending: false), FetchSortDescriptor(key: "salary")])
                    == ["alice", "carol", "Dave", "Bob", "erin"])
            #expect(
                try sorted([
                    FetchSortDescriptor(key: "department.name"), FetchSortDescriptor(key: "salary", ascending: false),
                ])
                    == ["erin", "Bob", "alice", "Dave", "carol"],
                "nil first, then by department name, then salary descending")
            #expect(
                try sorted([FetchSortDescriptor(key: "notes"), FetchSortDescriptor(key: "name")]) == [
                    "Dave", "alice", "carol", "erin", "Bob",
                ])
            let hank = Employee(context: context)
            hank.name = "Hank"
            hank.salary = 80_000
            #expect(
                try sorted([FetchSortDescriptor(key: "salary")]) == ["alice", "Bob", "Hank", "carol", "Dave", "erin"],
                "pending inserts are sorted in")
        }
    }

    @Test func fetchLimitAndOffset() throws {
        let folder = TemporaryDirectory()
        let (container, _) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws -> Void in
            let request = Employee.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "salary")]
            func page(limit: Int, offset: Int) throws -> [String] {
                request.fetchLimit = limit
                request.fetchOffset = offset
                return try context.fetch(request).map(\.name)
            }
            #expect(try page(limit: 2, offset: 0) == ["alice", "Bob"])
            #expect(try page(limit: 2, offset: 1) == ["Bob", "carol"])
            #expect(try page(limit: 0, offset: 3) == ["Dave", "erin"])
            #expect(try page(limit: 10, offset: 4) == ["erin"])
            #expect(try page(limit: 1, offset: 10) == [])
            let newcomer = Employee(context: context)
            newcomer.name = "cheap"
            newcomer.salary = 10
            #expect(
                try page(limit: 2, offset: 0) == ["cheap", "alice"],
                "the limit applies after pending inserts are merged in")
            request.fetchLimit = 3
            request.fetchOffset = 0
            #expect(try context.count(for: request) == 3, "count(for:) honours the limit")
        }
    }

    @Test func resultTypes() throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seeded(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let objectIDs = FetchRequest<ManagedObjectID>(entityName: "Employee")
            objectIDs.resultType = .managedObjectIDResultType
            objectIDs.predicate = FetchPredicate(key: "active", .equalTo, true)
            #expect(Set(try context.fetch(objectIDs)) == [ids["alice"]!, ids["carol"]!, ids["Dave"]!])

            let count = FetchRequest<Int>(entityName: "Employee")
            count.resultType = .countResultType
            count.predicate = FetchPredicate(key: "active", .equalTo, false)
            #expect(try context.fetch(count) == [2])

            let dictionaries = FetchRequest<[String: Any]>(entityName: "Employee")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.predicate = FetchPredicate(key: "name", .equalTo, "carol")
            let rows = try context.fetch(dictionaries)
            #expect(rows.count == 1)
            let carol = try #require(rows.first)
            #expect(carol["name"] as? String == "carol")
            #expect(carol["salary"] as? Int64 == 90_000)
            #expect(carol["active"] as? Bool == true)
            #expect(carol["notes"] as? String == "lead")
            #expect(carol["department"] as? ManagedObjectID == ids["Sales"]!)
            let departments = FetchRequest<[String: Any]>(entityName: "Department")
            departments.resultType = .dictionaryResultType
            departments.sortDescriptors = [FetchSortDescriptor(key: "name")]
            let departmentRows = try context.fetch(departments)
            #expect(departmentRows.map { $0["name"] as? String } == ["Research", "Sales"])
            #expect(departmentRows.allSatisfy { $0["employees"] == nil }, "to-many relationships are left out")

            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Department")) == 2)
            let unknown = FetchRequest<ManagedObject>(entityName: "Nope")
            let error = #expect(throws: CoreDataError.self) { _ = try context.fetch(unknown) }
            #expect(error?.code == .coreData)
        }
    }

    /// Vehicle (abstract) <- Car <- SportsCar, Vehicle <- Truck.
    static func vehicleModel() -> ManagedObjectModel {
        let vehicle = ModelBuilder.entity(
            "Vehicle",
            [
                ModelBuilder.attribute("name", .string, isOptional: false),
                ModelBuilder.attribute("wheels", .integer16, defaultValue: Int16(4)),
            ], isAbstract: true)
        let car = ModelBuilder.entity("Car", [ModelBuilder.attribute("doors", .integer16, defaultValue: Int16(4))])
        let sports = ModelBuilder.entity("SportsCar", [ModelBuilder.attribute("topSpeed", .double)])
        let truck = ModelBuilder.entity("Truck", [ModelBuilder.attribute("payload", .double)])
        vehicle.subentities = [car, truck]
        car.subentities = [sports]
        let garage = ModelBuilder.entity("Garage", [ModelBuilder.attribute("name", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship("vehicles", from: garage, to: vehicle, toMany: true),
            ModelBuilder.relationship("garage", from: vehicle, to: garage))
        ModelBuilder.relationship("favorite", from: garage, to: vehicle)
        return ModelBuilder.model([vehicle, car, sports, truck, garage])
    }

    @Test func includesSubentitiesFollowsTheHierarchy() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.vehicleModel())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                var vehicles: [ManagedObject] = []
                for (entity, name, extra) in [
                    ("Car", "civic", ("doors", 5)), ("SportsCar", "f40", ("doors", 2)),
                    ("Truck", "actros", ("wheels", 10)),
                ] {
                    let vehicle = EntityDescription.insertNewObject(forEntityName: entity, into: context)
                    vehicle.setValue(name, forKey: "name")
                    vehicle.setValue(extra.1, forKey: extra.0)
                    vehicles.append(vehicle)
                }
                let garage = EntityDescription.insertNewObject(forEntityName: "Garage", into: context)
                garage.setValue(Set(vehicles), forKey: "vehicles")
                garage.setValue(vehicles[1], forKey: "favorite")
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.vehicleModel())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            func fetch(
                _ entity: String, subentities: Bool = true, _ predicate: FetchPredicate? = nil
            ) throws -> [String] {
                let request = FetchRequest<ManagedObject>(entityName: entity)
                request.includesSubentities = subentities
                request.predicate = predicate
                request.sortDescriptors = [FetchSortDescriptor(key: "name")]
                return try context.fetch(request).map { "\($0.entity.name!):\($0.value(forKey: "name") as! String)" }
            }
            #expect(try fetch("Vehicle") == ["Truck:actros", "Car:civic", "SportsCar:f40"])
            #expect(try fetch("Vehicle", subentities: false) == [], "the abstract entity has no objects of its own")
            #expect(try fetch("Car") == ["Car:civic", "SportsCar:f40"])
            #expect(try fetch("Car", subentities: false) == ["Car:civic"])
            #expect(try fetch("SportsCar") == ["SportsCar:f40"])
            #expect(try fetch("Truck") == ["Truck:actros"])
            #expect(try fetch("Vehicle", FetchPredicate(key: "wheels", .greaterThan, 4)) == ["Truck:actros"])
            #expect(try fetch("Car", FetchPredicate(key: "doors", .lessThan, 4)) == ["SportsCar:f40"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Vehicle")) == 3)

            let fetched = try context.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle"))
            let f40 = try #require(fetched.first { $0.value(forKey: "name") as? String == "f40" })
            #expect(f40.entity.name == "SportsCar")
            #expect(f40.value(forKey: "doors") as? Int16 == 2)
            #expect(throws: CoreDataError.self) { _ = try f40.value(forCheckedKey: "payload") }

            // References read from the store name the objects' concrete entities.
            let garage = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Garage")).first)
            #expect(
                Set(garage.objectIDs(forRelationshipNamed: "vehicles").map(\.entity.name)) == [
                    "Car", "SportsCar", "Truck",
                ])
            #expect(garage.objectIDs(forRelationshipNamed: "favorite").map(\.entity.name) == ["SportsCar"])
            #expect(
                garage.objectIDs(forRelationshipNamed: "favorite").first?.uriRepresentation().path.hasPrefix(
                    "/SportsCar/") == true)

            // An ID naming the abstract entity resolves to the object's concrete entity.
            let model = container.managedObjectModel
            let vague = ManagedObjectID(
                entity: model.entitiesByName["Vehicle"]!, storeIdentifier: f40.objectID.storeIdentifier!,
                primaryKey: f40.objectID.primaryKey)
            #expect(vague == f40.objectID, "IDs of one hierarchy share a key space")
            #expect(context.object(with: vague) === f40)

            let mini = EntityDescription.insertNewObject(forEntityName: "Car", into: context)
            mini.setValue("mini", forKey: "name")
            #expect(try fetch("Vehicle") == ["Truck:actros", "Car:civic", "SportsCar:f40", "Car:mini"])
            #expect(try fetch("Truck") == ["Truck:actros"], "a pending insert of another entity does not match")
        }
    }

    @Test(arguments: [false, true]) func predicates(inMemory: Bool) throws {
        let folder = TemporaryDirectory()
        let (container, ids) = try Self.seeded(folder)
        let warm = container.newBackgroundContext()
        try warm.performAndWait {
            warm.retainsRegisteredObjects = true
            for employee in try warm.fetch(Self.request()) { _ = employee.department?.name }
        }
        func names(_ predicate: FetchPredicate) throws -> [String] {
            // Realized objects are evaluated in memory; rows nothing has realized, in the store.
            let context = inMemory ? warm : container.newBackgroundContext()
            return try context.performAndWait { try Self.names(Self.request(predicate), in: context) }
        }
        typealias P = FetchPredicate
        let active = P(key: "active", .equalTo, true)
        #expect(
            try names(P(andPredicateWithSubpredicates: [P(key: "salary", .greaterThan, 60_000), active])) == [
                "carol", "Dave",
            ])
        #expect(
            try names(
                P(orPredicateWithSubpredicates: [P(key: "salary", .lessThan, 60_000), P(key: "notes", .equalTo, "new")])
            ) == ["alice", "erin"])
        #expect(try names(P(notPredicateWithSubpredicate: active)) == ["Bob", "erin"])
        #expect(try names(P(andPredicateWithSubpredicates: [])) == ["alice", "Bob", "carol", "Dave", "erin"])
        #expect(try names(P(value: true)).count == 5)
        #expect(try names(P(value: false)).isEmpty)
        #expect(try names(P(key: "name", .in, ["alice", "Dave", "zed"])) == ["alice", "Dave"])
        #expect(try names(P(key: "name", .in, ["ALICE", "bob"], options: .caseInsensitive)) == ["alice", "Bob"])
        #expect(try names(P(key: "salary", .in, [70_000, 90_000])) == ["Bob", "carol"])
        #expect(try names(P(key: "name", .beginsWith, "b", options: .caseInsensitive)) == ["Bob"])
        #expect(try names(P(key: "name", .beginsWith, "b")) == [])
        #expect(try names(P(key: "name", .contains, "A", options: .caseInsensitive)) == ["alice", "carol", "Dave"])
        #expect(try names(P(key: "name", .contains, "A")) == [])
        #expect(try names(P(key: "name", .endsWith, "e")) == ["alice", "Dave"])
        #expect(try names(P(key: "notes", .equalTo, nil)) == ["alice", "Dave"])
        #expect(try names(P(key: "notes", .notEqualTo, nil)) == ["Bob", "carol", "erin"])
        #expect(try names(P(key: "salary", .greaterThan, nil)) == [], "an ordering comparison with nil is false")
        #expect(try names(P(key: "salary", .equalTo, nil)) == [])
        #expect(try names(P(key: "department", .equalTo, nil)) == ["erin"])
        #expect(try names(P(key: "department", .equalTo, ids["Sales"]!)) == ["carol", "Dave"])
        #expect(try names(P(key: "department.name", .equalTo, "Research")) == ["alice", "Bob"])
        #expect(try names(P(key: "department.name", .beginsWith, "s", options: .caseInsensitive)) == ["carol", "Dave"])
        #expect(try names(P(key: "salary", .between, [70_000, 110_000])) == ["Bob", "carol", "Dave"])
        #expect(throws: FetchPredicateError.self, "a key the entity does not have is an error") {
            try names(P(key: "nickname", .equalTo, "x"))
        }
        #expect(
            P(key: "name", .beginsWith, "b", options: .caseInsensitive).predicateFormat == #"name BEGINSWITH[c] "b""#)
    }
}
