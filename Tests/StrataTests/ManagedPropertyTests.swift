import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// One class for two entities that declare the same properties in different orders.
final class LabelledThing: ManagedObject {
    @Managed var label: String
    @Managed var weight: Int64
    @Managed("title") var heading: String?
}

/// `@Managed` properties: each object reads and writes its own entity's property of that name,
/// whatever the order of the entity's properties, through a store and a reopen.
@Suite struct ManagedPropertyTests {
    static func model() -> ManagedObjectModel {
        func attributes(_ names: [String]) -> [PropertyDescription] {
            names.map { name in
                name == "weight"
                    ? ModelBuilder.attribute(name, .integer64, isOptional: false)
                    : ModelBuilder.attribute(name, .string, isOptional: name == "title")
            }
        }
        let box = ModelBuilder.entity("Box", attributes(["label", "weight", "title"]), className: "LabelledThing")
        let crate = ModelBuilder.entity("Crate", attributes(["title", "weight", "label"]), className: "LabelledThing")
        LabelledThing.register(for: "Box")
        LabelledThing.register(for: "Crate")
        return ModelBuilder.model([box, crate])
    }

    @Test func oneClassForTwoEntitiesReadsEachEntitysValuesAfterReopen() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let entities = container.managedObjectModel.entitiesByName
                for (index, name) in ["Box", "Crate", "Box", "Crate"].enumerated() {
                    let thing = LabelledThing(entity: entities[name]!, insertInto: context)
                    thing.label = "\(name) \(index)"
                    thing.weight = Int64(index)
                    thing.heading = index < 2 ? "\(name) title" : nil
                }
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let boxes = try context.fetch(FetchRequest<LabelledThing>(entityName: "Box"))
            let crates = try context.fetch(FetchRequest<LabelledThing>(entityName: "Crate"))
            // Read the two entities' objects in turn, so that each property is looked up for both.
            let things = zip(boxes.sorted { $0.weight < $1.weight }, crates.sorted { $0.weight < $1.weight })
                .flatMap { [$0, $1] }
            #expect(things.map(\.label) == ["Box 0", "Crate 1", "Box 2", "Crate 3"])
            #expect(things.map(\.weight) == [0, 1, 2, 3])
            #expect(things.map(\.heading) == ["Box title", "Crate title", nil, nil])
            #expect(things.map { $0.value(forKey: "title") as? String } == ["Box title", "Crate title", nil, nil])
            #expect(things.map(\.entity.name) == ["Box", "Crate", "Box", "Crate"])
        }
    }

    /// An optional `@Managed` property stores what it is set to, unwrapped, or clears it: set
    /// through the property, from generic code (where the value's type is an `Optional`), and as
    /// an `Any` holding an optional; the values are saved and read back from the store.
    @Test func optionalPropertiesStoreTheirValueUnwrappedOrClearItFromTypedAndGenericCode() throws {
        func assign<Value>(_ value: Value, to thing: LabelledThing) {
            thing._setManagedValue(value, forKey: "title", hint: nil)
        }
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entity = container.managedObjectModel.entitiesByName["Box"]!
            var things: [LabelledThing] = []
            let setters: [(LabelledThing) -> Void] = [
                { thing in thing.heading = "typed" },
                { thing in thing.heading = nil },
                { thing in assign(Optional("generic"), to: thing) },
                { thing in assign(String?.none, to: thing) },
                { thing in assign(Optional("boxed") as Any, to: thing) },
            ]
            for (index, set) in setters.enumerated() {
                let thing = LabelledThing(entity: entity, insertInto: context)
                thing.label = "thing \(index)"
                thing.weight = Int64(index)
                thing.heading = "before"
                set(thing)
                things.append(thing)
            }
            let expected: [String?] = ["typed", nil, "generic", nil, "boxed"]
            #expect(things.map(\.heading) == expected)
            #expect(
                things.map { $0.value(forKey: "title").map { "\(type(of: $0))" } }
                    == expected.map { $0.map { _ in "String" } })
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<LabelledThing>(entityName: "Box")).sorted {
                $0.weight < $1.weight
            }
            #expect(fetched.map(\.heading) == expected)
        }
    }
}
