import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Composite attributes (Core Data's `NSCompositeAttributeDescription`): a dictionary of typed
/// elements, stored, read back, matched by namespaced key paths.
@Suite struct CompositeAttributeTests {
    static var lyon: [String: Any] {
        [
            "street": "1 rue de la République", "city": "Lyon", "country": "FR",
            "geo": ["latitude": 45.764, "longitude": 4.8357],
        ]
    }

    @Test func theModelsCompositesLoadWithTheirElements() throws {
        let model = try RealWorldModelTests.model("Commerce")
        let billing = try #require(
            model.entitiesByName["Customer"]?.attributesByName["billingAddress"] as? CompositeAttributeDescription)
        #expect(billing.attributeType == .compositeAttributeType)
        #expect(billing.type == .composite)
        #expect(billing.elements.map(\.name) == ["city", "country", "geo", "street"])
        let geo = try #require(billing.elements[2] as? CompositeAttributeDescription)
        #expect(geo.elements.map(\.name) == ["latitude", "longitude"])
        #expect(geo.elements.map(\.attributeType) == [.doubleAttributeType, .doubleAttributeType])
        let defaults = try #require(billing.defaultValue as? [String: Any])
        #expect(defaults["country"] as? String == "FR")
        #expect((defaults["geo"] as? [String: Any])?["latitude"] as? Double == 0)
        let shipping = try #require(
            model.entitiesByName["Customer"]?.attributesByName["shippingAddress"] as? CompositeAttributeDescription)
        #expect(shipping.elements.map(\.name) == ["street", "city", "postcode"], "inline <element>s")
        #expect(shipping.elements[2].maxValue as? Int == 10)
    }

    @Test func valuesRoundTripThroughTheStore() throws {
        let folder = TemporaryDirectory()
        let url = try #require(RealWorldModelTests.models["Commerce"])
        var uris: [URL] = []
        do {
            let container = try GraphModel.container(
                at: folder.store(), model: try ManagedObjectModel(checkedContentsOf: url))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let supplier = EntityDescription.insertNewObject(forEntityName: "Supplier", into: context)
                supplier.setValue("Soierie", forKey: "name")
                supplier.setValue(UUID(), forKey: "identifier")
                supplier.setValue(Self.lyon, forKey: "address")
                let customer = EntityDescription.insertNewObject(forEntityName: "Customer", into: context)
                customer.setValue("Ada", forKey: "name")
                customer.setValue(UUID(), forKey: "identifier")
                let billing = try #require(customer.value(forKey: "billingAddress") as? [String: Any])
                #expect(billing["country"] as? String == "FR", "a new object gets the elements' defaults")
                customer.setValue(["city": "Paris"], forKey: "shippingAddress")
                try context.save()
                uris = [supplier.objectID.uriRepresentation(), customer.objectID.uriRepresentation()]
            }
            try container.close()
        }
        let container = try GraphModel.container(
            at: folder.store(), model: try ManagedObjectModel(checkedContentsOf: url))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let supplier = try DerivedAttributeTests.object(uris[0], in: container, context)
            let address = try #require(supplier.value(forKey: "address") as? [String: Any])
            #expect(SampleModelTests.same(address, Self.lyon))
            #expect((address["geo"] as? [String: Any])?["longitude"] as? Double == 4.8357)
            let customer = try DerivedAttributeTests.object(uris[1], in: container, context)
            let shipping = try #require(customer.value(forKey: "shippingAddress") as? [String: Any])
            #expect(shipping.count == 1, "elements without a value stay absent")
            #expect(shipping["city"] as? String == "Paris")
        }
        try container.close()
    }

    /// `composite.element` key paths in predicates, on stored rows and on unsaved objects.
    @Test func predicatesReadElementsByNamespacedKeyPaths() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: try RealWorldModelTests.model("Commerce"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (name, city, latitude) in [("Lyon", "Lyon", 45.76), ("Paris", "Paris", 48.85), ("Nice", "Nice", 43.7)] {
                let supplier = EntityDescription.insertNewObject(forEntityName: "Supplier", into: context)
                supplier.setValue(name, forKey: "name")
                supplier.setValue(UUID(), forKey: "identifier")
                supplier.setValue(
                    ["city": city, "country": "FR", "geo": ["latitude": latitude, "longitude": 2.0]], forKey: "address")
            }
            try context.save()
            context.reset()
            func names(_ format: String) throws -> [String] {
                let request = FetchRequest<ManagedObject>(entityName: "Supplier")
                request.predicate = try FetchPredicate(checkedFormat: format)
                return try context.fetch(request).map { $0.value(forKey: "name") as! String }.sorted()
            }
            #expect(try names("address.city == 'Paris'") == ["Paris"])
            let sorted = FetchRequest<ManagedObject>(entityName: "Supplier")
            sorted.sortDescriptors = [FetchSortDescriptor(key: "address.geo.latitude", ascending: false)]
            #expect(try context.fetch(sorted).map { $0.value(forKey: "name") as? String } == ["Paris", "Lyon", "Nice"])
            #expect(try names("address.geo.latitude > 45") == ["Lyon", "Paris"])
            #expect(try names("address.city BEGINSWITH[c] 'n' OR address.geo.latitude < 44") == ["Nice"])
            let unsaved = EntityDescription.insertNewObject(forEntityName: "Supplier", into: context)
            unsaved.setValue("Brest", forKey: "name")
            unsaved.setValue(UUID(), forKey: "identifier")
            unsaved.setValue(["city": "Brest", "geo": ["latitude": 48.39, "longitude": -4.49]], forKey: "address")
            #expect(try names("address.geo.latitude > 48") == ["Brest", "Paris"], "unsaved changes match in memory")
            let error = #expect(throws: (any Error).self) { try names("address.town == 'Lyon'") }
            #expect("\(error!)".contains("town"))
        }
        try container.close()
    }

    @Test func valuesThatDoNotFitAreRefused() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: try RealWorldModelTests.model("Commerce"))
        let context = container.newBackgroundContext()
        context.performAndWait {
            let supplier = EntityDescription.insertNewObject(forEntityName: "Supplier", into: context)
            supplier.setValue(["city": "Lyon"], forKey: "address")
            for bad in [["town": "Lyon"], ["city": 12], ["geo": ["latitude": "north"]], "Lyon"] as [Any] {
                let error = #expect(throws: CoreDataError.self) { try supplier.setValue(bad, forCheckedKey: "address") }
                #expect(error?.code == .keyValueValidation)
            }
            #expect(
                (supplier.value(forKey: "address") as? [String: Any])?["city"] as? String == "Lyon", "nothing changed")
        }
        try container.close()
    }

    /// `NSCompositeAttributeDescription` built in code, with a nested composite.
    @Test func compositesBuiltInCode() throws {
        let richter = ModelBuilder.attribute("richter", .double)
        let source = CompositeAttributeDescription(
            name: "source",
            elements: [ModelBuilder.attribute("network", .string), ModelBuilder.attribute("station", .integer32)])
        let magnitude = CompositeAttributeDescription(name: "magnitude", elements: [richter, source])
        let model = ModelBuilder.model([
            ModelBuilder.entity("Quake", [ModelBuilder.attribute("place", .string), magnitude])
        ])
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let quake = EntityDescription.insertNewObject(forEntityName: "Quake", into: context)
            quake.setValue("Tokyo", forKey: "place")
            quake.setValue(["richter": 6, "source": ["network": "JMA", "station": 12]], forKey: "magnitude")
            let held = try #require(quake.value(forKey: "magnitude") as? [String: Any])
            #expect(held["richter"] as? Double == 6, "numbers convert to the element's type")
            #expect((held["source"] as? [String: Any])?["station"] as? Int32 == 12)
            try context.save()
            context.reset()
            let request = FetchRequest<ManagedObject>(entityName: "Quake")
            request.predicate = try FetchPredicate(
                checkedFormat: "magnitude.richter >= 6 AND magnitude.source.network == 'JMA'")
            let found = try context.fetch(request)
            #expect(found.count == 1)
            #expect(SampleModelTests.same(found.first?.value(forKey: "magnitude"), held))
        }
        try container.close()
    }
}
