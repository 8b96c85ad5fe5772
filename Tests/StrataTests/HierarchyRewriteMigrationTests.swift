import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// Hierarchy and relationship changes made by rewriting the log in place, keys kept: an entity
/// split into a parent and sub-entities, a sub-entity removed (its objects dropped, references
/// to them cleared), a one-to-one relationship becoming one-to-many. Checked object by object.
@Suite struct HierarchyRewriteMigrationTests {
    /// The primary key part of an object URI.
    static func key(_ object: ManagedObject) -> String { object.objectID.uriRepresentation().lastPathComponent }

    /// An optional relationship.
    static func relationship(_ name: String, to destination: EntityDescription, toMany: Bool) -> RelationshipDescription
    {
        let relationship = RelationshipDescription()
        relationship.name = name
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = .nullifyDeleteRule
        relationship.destinationEntity = destination
        return relationship
    }

    @Test func anEntitySplitIntoAHierarchyKeepsItsKeys() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        // Version 2 first (made in place or rewritten), then the split into Party ⊃ Customer, Supplier.
        let second = try GraphModel.container(at: url, model: ShopModels.version("Shop 2"))
        let before = try second.viewContext.performAndWait {
            let customers = try ShopModels.customers(in: second.viewContext)
            return customers.mapValues { customer in
                (key: Self.key(customer), orders: Set(ShopModels.related(customer, "orders").map { Self.key($0) }))
            }
        }
        try second.close()
        #expect(
            try MigrationMethod.forStore(at: url, from: ShopModels.version("Shop 2"), to: ShopModels.version("Shop 3"))
                == .inPlaceRewrite)

        for pass in 0..<2 {
            let container = try GraphModel.container(at: url, model: ShopModels.version("Shop 3"))
            try container.viewContext.performAndWait {
                let customers = try ShopModels.customers(in: container.viewContext)
                #expect(customers.count == ShopModels.customerCount)
                for i in 0..<ShopModels.customerCount {
                    let customer = try #require(customers["Customer \(i)"])
                    #expect(customer.entity.name == "Customer")
                    #expect(Self.key(customer) == before["Customer \(i)"]?.key, "pass \(pass)")
                    #expect(customer.value(forKey: "mail") as? String == ShopModels.email(i))
                    let orders = ShopModels.related(customer, "orders")
                    #expect(Set(orders.map { Self.key($0) }) == before["Customer \(i)"]?.orders)
                    for order in orders {
                        #expect(order.value(forKey: "buyer") as? ManagedObject === customer)
                        #expect(order.value(forKey: "total") as? String == "\(Double(i) + 0.5)")
                    }
                }
                #expect(
                    try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Party")) == ShopModels
                        .customerCount + pass)
                if pass == 0 {
                    let supplier = EntityDescription.insertNewObject(
                        forEntityName: "Supplier", into: container.viewContext)
                    supplier.setValue("Acme", forKey: "name")
                    try container.viewContext.save()
                }
            }
            try container.close()
        }
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    /// The reference model with a `head` of each department, and when `managers`, a `Manager`
    /// sub-entity of `Employee`.
    static func withHead(managers: Bool) -> ManagedObjectModel {
        let model = GraphModel.make()
        let department = model.entitiesByName["Department"]!, employee = model.entitiesByName["Employee"]!
        department.managedObjectClassName = "ManagedObject"
        employee.managedObjectClassName = "ManagedObject"
        department.properties.append(relationship("head", to: employee, toMany: false))
        if managers {
            let manager = EntityDescription(name: "Manager")
            manager.properties = [AttributeDescription(name: "reports", type: .integer16)]
            employee.subentities = [manager]
            model.entities.append(manager)
        }
        return model
    }

    @Test func aRemovedSubEntityLosesItsObjectsAndTheirReferences() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let source = Self.withHead(managers: true)
        let container = try GraphModel.container(at: url, model: source)
        let keys = try container.viewContext.performAndWait {
            let context = container.viewContext
            var keys: [String: String] = [:]
            let departments = (0..<2).map { i in
                let department = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue("D\(i)", forKey: "name")
                return department
            }
            let employees = (0..<10).map { i in
                let employee = EntityDescription.insertNewObject(
                    forEntityName: i < 2 ? "Manager" : "Employee", into: context)
                employee.setValue("E\(i)", forKey: "name")
                employee.setValue(departments[i % 2], forKey: "department")
                return employee
            }
            departments[0].setValue(employees[0], forKey: "head")
            departments[1].setValue(employees[3], forKey: "head")
            try context.save()
            for (i, employee) in employees.enumerated() { keys["E\(i)"] = Self.key(employee) }
            for department in departments { keys[department.value(forKey: "name") as! String] = Self.key(department) }
            return keys
        }
        try container.close()
        let destination = Self.withHead(managers: false)
        #expect(
            try MigrationMethod.forStore(at: url, from: Self.withHead(managers: true), to: destination)
                == .inPlaceRewrite)

        let migrated = try GraphModel.container(at: url, model: destination)
        try migrated.viewContext.performAndWait {
            let context = migrated.viewContext
            let employees = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee"))
            #expect(
                Set(employees.map { $0.value(forKey: "name") as! String }) == Set((2..<10).map { "E\($0)" }),
                "the managers are gone")
            for employee in employees {
                let name = employee.value(forKey: "name") as! String
                #expect(Self.key(employee) == keys[name])
                let i = Int(name.dropFirst())!
                #expect(
                    (employee.value(forKey: "department") as? ManagedObject)?.value(forKey: "name") as? String
                        == "D\(i % 2)")
            }
            let departments = try context.fetch(FetchRequest<ManagedObject>(entityName: "Department"))
            for department in departments {
                let name = department.value(forKey: "name") as! String
                #expect(Self.key(department) == keys[name])
                #expect(ShopModels.related(department, "employees").count == 4)
                // D0's head was a manager: cleared; D1's is E3.
                #expect(
                    (department.value(forKey: "head") as? ManagedObject)?.value(forKey: "name") as? String
                        == (name == "D0" ? nil : "E3"))
            }
        }
        try migrated.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    /// The reference model with `Department.chief` ↔ `Employee.leads`, one-to-one, or with
    /// `chief` become `chiefs`, to-many.
    static func withChief(toMany: Bool, renamedFrom: String? = nil) -> ManagedObjectModel {
        let model = GraphModel.make()
        let department = model.entitiesByName["Department"]!, employee = model.entitiesByName["Employee"]!
        department.managedObjectClassName = "ManagedObject"
        employee.managedObjectClassName = "ManagedObject"
        let chief = relationship(toMany ? "chiefs" : "chief", to: employee, toMany: toMany)
        chief.renamingIdentifier = renamedFrom ?? (toMany ? "chief" : nil)
        let leads = relationship("leads", to: department, toMany: false)
        chief.inverseRelationship = leads
        leads.inverseRelationship = chief
        department.properties.append(chief)
        employee.properties.append(leads)
        return model
    }

    @Test func aOneToOneBecomingOneToManyKeepsItsPairs() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let container = try GraphModel.container(at: url, model: Self.withChief(toMany: false))
        try container.viewContext.performAndWait {
            let context = container.viewContext
            for i in 0..<3 {
                let department = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue("D\(i)", forKey: "name")
                let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("E\(i)", forKey: "name")
                if i < 2 { department.setValue(employee, forKey: "chief") }
            }
            try context.save()
        }
        try container.close()
        #expect(
            try MigrationMethod.forStore(at: url, from: Self.withChief(toMany: false), to: Self.withChief(toMany: true))
                == .inPlaceRewrite)

        let migrated = try GraphModel.container(at: url, model: Self.withChief(toMany: true))
        try migrated.viewContext.performAndWait {
            let context = migrated.viewContext
            for department in try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")) {
                let name = department.value(forKey: "name") as! String
                let chiefs = ShopModels.related(department, "chiefs").map { $0.value(forKey: "name") as! String }
                #expect(chiefs == (name == "D2" ? [] : ["E" + name.dropFirst()]))
            }
            // A second chief now fits.
            let d0 = try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).first {
                $0.value(forKey: "name") as? String == "D0"
            }!
            let e2 = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee")).first {
                $0.value(forKey: "name") as? String == "E2"
            }!
            e2.setValue(d0, forKey: "leads")
            try context.save()
            #expect(ShopModels.related(d0, "chiefs").count == 2)
        }
        try migrated.close()
    }

    /// Vehicles (`Vehicle` ⊃ `Car`, `Truck`) and garages of cars; with `carMovedOut`, `Car` is
    /// a root entity of its own, redeclaring `name`.
    static func vehicles(carMovedOut: Bool) -> ManagedObjectModel {
        let vehicle = EntityDescription(name: "Vehicle"), car = EntityDescription(name: "Car")
        let truck = EntityDescription(name: "Truck"), garage = EntityDescription(name: "Garage")
        vehicle.properties = [AttributeDescription(name: "name", type: .string)]
        truck.properties = [AttributeDescription(name: "load", type: .integer32)]
        garage.properties = [AttributeDescription(name: "name", type: .string)]
        let cars = relationship("cars", to: car, toMany: true),
            parking = relationship("garage", to: garage, toMany: false)
        cars.inverseRelationship = parking
        parking.inverseRelationship = cars
        garage.properties.append(cars)
        car.properties =
            (carMovedOut ? [AttributeDescription(name: "name", type: .string)] : [])
            + [AttributeDescription(name: "seats", type: .integer16), parking]
        vehicle.subentities = carMovedOut ? [truck] : [car, truck]
        let model = ManagedObjectModel()
        model.entities = [vehicle, car, truck, garage]
        return model
    }

    @Test func anEntityMovedOutOfItsHierarchyKeepsItsKeys() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let container = try PersistentHistoryTests.container(at: url, model: Self.vehicles(carMovedOut: false))
        let keys = try container.viewContext.performAndWait {
            let context = container.viewContext
            let garages = (0..<2).map { i in
                let garage = EntityDescription.insertNewObject(forEntityName: "Garage", into: context)
                garage.setValue("G\(i)", forKey: "name")
                return garage
            }
            var objects: [String: ManagedObject] = [:]
            for i in 0..<12 {
                let kind = i < 6 ? "Car" : i < 10 ? "Truck" : "Vehicle"
                let object = EntityDescription.insertNewObject(forEntityName: kind, into: context)
                object.setValue("\(kind) \(i)", forKey: "name")
                if kind == "Car" {
                    object.setValue(Int16(i + 2), forKey: "seats")
                    object.setValue(garages[i % 2], forKey: "garage")
                } else if kind == "Truck" {
                    object.setValue(Int32(i * 100), forKey: "load")
                }
                objects["\(kind) \(i)"] = object
            }
            try context.save()
            // A later change of a car, for the history.
            objects["Car 0"]!.setValue(Int16(9), forKey: "seats")
            try context.save()
            return objects.mapValues { $0.objectID.uriRepresentation() }
        }
        try container.close()
        let destination = Self.vehicles(carMovedOut: true)
        #expect(
            try MigrationMethod.forStore(at: url, from: Self.vehicles(carMovedOut: false), to: destination)
                == .inPlaceRewrite)

        for pass in 0..<2 {
            let migrated = try PersistentHistoryTests.container(at: url, model: Self.vehicles(carMovedOut: true))
            try migrated.viewContext.performAndWait {
                let context = migrated.viewContext
                let cars = try context.fetch(FetchRequest<ManagedObject>(entityName: "Car"))
                #expect(cars.count == 6 + pass)
                for car in cars where pass == 0 || car.value(forKey: "name") as? String != "Car new" {
                    let name = try #require(car.value(forKey: "name") as? String)
                    let i = try #require(Int(name.dropFirst("Car ".count)))
                    #expect(car.objectID.uriRepresentation() == keys[name], "\(name) keeps its URI")
                    #expect(car.value(forKey: "seats") as? Int16 == (i == 0 ? 9 : Int16(i + 2)))
                    #expect(
                        (car.value(forKey: "garage") as? ManagedObject)?.value(forKey: "name") as? String == "G\(i % 2)"
                    )
                }
                let vehicles = try context.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle"))
                #expect(
                    Set(vehicles.compactMap { $0.value(forKey: "name") as? String })
                        == Set((6..<12).map { $0 < 10 ? "Truck \($0)" : "Vehicle \($0)" }))
                for vehicle in vehicles {
                    let name = vehicle.value(forKey: "name") as! String
                    #expect(vehicle.objectID.uriRepresentation() == keys[name])
                    if vehicle.entity.name == "Truck" {
                        #expect(vehicle.value(forKey: "load") as? Int32 == Int32(name.dropFirst("Truck ".count))! * 100)
                    }
                }
                for garage in try context.fetch(FetchRequest<ManagedObject>(entityName: "Garage")) {
                    #expect(
                        ShopModels.related(garage, "cars").count == 3
                            + (pass == 1 && garage.value(forKey: "name") as? String == "G0" ? 1 : 0))
                }
                if pass == 0 {
                    // The history reads under the new model: the cars' inserts under their URIs, then the update.
                    let all = try PersistentHistoryTests.transactions(
                        .fetchHistory(after: nil as PersistentHistoryToken?), in: migrated)
                    #expect(all.count == 2)
                    let inserted = Set(
                        (all.first?.changes ?? []).filter { $0.changeType == .insert }.map {
                            $0.changedObjectID.uriRepresentation()
                        })
                    #expect(Set(keys.values).isSubset(of: inserted))
                    #expect(all.last?.changes?.first?.changedObjectID.uriRepresentation() == keys["Car 0"])
                    let car = EntityDescription.insertNewObject(forEntityName: "Car", into: context)
                    car.setValue("Car new", forKey: "name")
                    car.setValue(
                        try context.fetch(FetchRequest<ManagedObject>(entityName: "Garage")).first {
                            $0.value(forKey: "name") as? String == "G0"
                        }, forKey: "garage")
                    try context.save()
                    #expect(!keys.values.contains(car.objectID.uriRepresentation()))
                }
            }
            try migrated.close()
        }
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    /// A store of the one-to-many `chiefs` (D0: E0 and, when `twice`, E2; D1: E1; D2: none).
    static func fillChiefs(_ url: URL, twice: Bool) throws {
        let container = try GraphModel.container(at: url, model: Self.withChief(toMany: true))
        try container.viewContext.performAndWait {
            let context = container.viewContext
            for i in 0..<3 {
                let department = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue("D\(i)", forKey: "name")
                let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("E\(i)", forKey: "name")
                if i < 2 { employee.setValue(department, forKey: "leads") }
            }
            if twice {
                let employees = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee"))
                let d0 = try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).first {
                    $0.value(forKey: "name") as? String == "D0"
                }
                employees.first { $0.value(forKey: "name") as? String == "E2" }?.setValue(d0, forKey: "leads")
            }
            try context.save()
        }
        try container.close()
    }

    @Test func aOneToManyBecomingOneToOneFillsItsColumn() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        try Self.fillChiefs(url, twice: false)
        let destination = Self.withChief(toMany: false, renamedFrom: "chiefs")
        #expect(
            try MigrationMethod.forStore(at: url, from: Self.withChief(toMany: true), to: destination)
                == .inPlaceRewrite)
        for _ in 0..<2 {
            let migrated = try GraphModel.container(
                at: url, model: Self.withChief(toMany: false, renamedFrom: "chiefs"))
            try migrated.viewContext.performAndWait {
                for department in try migrated.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Department"))
                {
                    let name = department.value(forKey: "name") as! String
                    let chief = department.value(forKey: "chief") as? ManagedObject
                    #expect(chief?.value(forKey: "name") as? String == (name == "D2" ? nil : "E" + name.dropFirst()))
                    if let chief { #expect(chief.value(forKey: "leads") as? ManagedObject === department) }
                }
            }
            try migrated.close()
        }
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    @Test func aOneToManyWithSeveralObjectsCannotBecomeOneToOne() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        try Self.fillChiefs(url, twice: true)
        let error = try #require(throws: CoreDataError.self) {
            try GraphModel.container(at: url, model: Self.withChief(toMany: false, renamedFrom: "chiefs"))
        }
        #expect(error.code == .validationRelationshipExceedsMaximumCount)
        // Nothing changed: the store opens with its model, D0 with both chiefs.
        let old = try GraphModel.container(at: url, model: Self.withChief(toMany: true))
        try old.viewContext.performAndWait {
            let d0 = try old.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Department")).first {
                $0.value(forKey: "name") as? String == "D0"
            }
            #expect(
                Set(ShopModels.related(try #require(d0), "chiefs").map { $0.value(forKey: "name") as! String }) == [
                    "E0", "E2",
                ])
        }
        try old.close()
    }
}
