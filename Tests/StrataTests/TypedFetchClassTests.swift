import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The class of a parent entity's objects, in ``TypedFetchClassTests``.
class TypedFetchAnimal: ManagedObject {
    @Managed var name: String
}

/// The class of a subentity's objects, a subclass of the parent's.
final class TypedFetchDog: TypedFetchAnimal {
    @Managed var barks: Bool
}

/// A fetch typed `FetchRequest<T>` returns its objects as `[T]`: as they are when every object
/// is of class `T` itself (noted as the fetch makes each), cast one by one when some are of a
/// subclass, and an error when one is not a `T`. Both ways a fetch makes its objects (as rows
/// are read, and after all are read, for a sort with a limit) are checked.
@Suite struct TypedFetchClassTests {
    /// Animal <- Dog, each entity with its own class.
    static func model() -> ManagedObjectModel {
        let animal = ModelBuilder.entity(
            "TypedFetchAnimal", [ModelBuilder.attribute("name", .string, isOptional: false)],
            className: String(reflecting: TypedFetchAnimal.self))
        let dog = ModelBuilder.entity(
            "TypedFetchDog", [ModelBuilder.attribute("barks", .boolean, defaultValue: true)],
            className: String(reflecting: TypedFetchDog.self))
        animal.subentities = [dog]
        return ModelBuilder.model([animal, dog])
    }

    /// Requests of `entity` typed `T`: one whose objects are made as the rows are read, one
    /// sorted by name with a limit (made after every row is read).
    static func requests<T: ManagedObject>(_ entity: String, _: T.Type) -> [FetchRequest<T>] {
        let limited = FetchRequest<T>(entityName: entity)
        limited.sortDescriptors = [FetchSortDescriptor(key: "name")]
        limited.fetchLimit = 10
        return [FetchRequest<T>(entityName: entity), limited]
    }

    /// Saves two animals and two dogs, reopens the store and calls `body` with a new context.
    static func withSavedAnimals(_ body: (ManagedObjectContext) throws -> Void) throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        do {
            let container = try GraphModel.container(at: folder.store(), model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for name in ["cat", "owl"] {
                    TypedFetchAnimal(entity: model.entitiesByName["TypedFetchAnimal"]!, insertInto: context).name = name
                }
                for name in ["rex", "ace"] {
                    TypedFetchDog(entity: model.entitiesByName["TypedFetchDog"]!, insertInto: context).name = name
                }
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait { try body(context) }
        try container.close()
    }

    @Test func objectsOfTheRequestedClassAndItsSubclassesAreReturned() throws {
        try Self.withSavedAnimals { context in
            for request in Self.requests("TypedFetchAnimal", TypedFetchAnimal.self) {
                let animals = try context.fetch(request)
                #expect(animals.map(\.name).sorted() == ["ace", "cat", "owl", "rex"])
                #expect(animals.filter { $0 is TypedFetchDog }.map(\.name).sorted() == ["ace", "rex"])
            }
            for request in Self.requests("TypedFetchDog", TypedFetchDog.self) {
                let dogs = try context.fetch(request)
                #expect(dogs.map(\.name).sorted() == ["ace", "rex"])
                #expect(dogs.filter(\.barks).count == 2)
            }
        }
    }

    @Test func anObjectNotOfTheRequestedClassIsAnError() throws {
        try Self.withSavedAnimals { context in
            for request in Self.requests("TypedFetchAnimal", TypedFetchDog.self) {
                #expect(throws: CoreDataError.self) { _ = try context.fetch(request) }
            }
            for request in Self.requests("TypedFetchDog", TypedFetchDog.self) {
                let dogs = try context.fetch(request)
                #expect(dogs.count == 2)
            }
        }
    }
}
