import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A class registered for its entity only after a context made faults of the entity.
final class LateRegisteredNote: ManagedObject {
    @Managed var title: String
}

/// One of two classes of one entity, whichever an instance was created of last.
final class SwitchingNoteA: ManagedObject {
    @Managed var title: String
}

/// The other class of ``SwitchingNoteA``'s entity.
final class SwitchingNoteB: ManagedObject {
    @Managed var title: String
}

/// Faults made by ID take their class from the class registry as it is when they are made: a
/// context that remembers the class of the last entity it made a fault of must see a class
/// registered after that.
@Suite struct FaultClassLookupTests {
    @Test func aClassRegisteredAfterFaultsWereMadeIsUsedForTheNextFaults() throws {
        let folder = TemporaryDirectory()
        let note = ModelBuilder.entity(
            "LateRegisteredNote", [ModelBuilder.attribute("title", .string, isOptional: false)])
        let model = ModelBuilder.model([note])
        var container: PersistentContainer? = try GraphModel.container(at: folder.store(), model: model)
        let writer = container!.newBackgroundContext()
        let ids = try writer.performAndWait {
            let objects = (0..<2).map { index in
                let object = ManagedObject(entity: note, insertInto: writer)
                object.setValue("note \(index)", forKey: "title")
                return object
            }
            try writer.save()
            return objects.map(\.objectID)
        }
        try container!.close()
        container = nil

        let reopened = try GraphModel.container(at: folder.store(), model: model)
        let context = reopened.newBackgroundContext()
        try context.performAndWait {
            let first = context.object(with: ids[0])
            #expect(type(of: first) == ManagedObject.self)
            #expect(first.value(forKey: "title") as? String == "note 0")
            LateRegisteredNote.register(for: "LateRegisteredNote")
            let second = try #require(context.object(with: ids[1]) as? LateRegisteredNote)
            #expect(second.title == "note 1")
        }
        try reopened.close()
    }

    /// Creating an instance registers its class for the entity each time the class differs from
    /// the last one an instance was created of (the check that skips the registry's lock for
    /// the same class again must not skip a switch back).
    @Test func faultsTakeTheClassAnInstanceWasLastCreatedOf() throws {
        let folder = TemporaryDirectory()
        let note = ModelBuilder.entity("SwitchingNote", [ModelBuilder.attribute("title", .string, isOptional: false)])
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([note]))
        let writer = container.newBackgroundContext()
        let id = try writer.performAndWait {
            let objects: [ManagedObject] = [
                SwitchingNoteA(entity: note, insertInto: writer), SwitchingNoteB(entity: note, insertInto: writer),
                SwitchingNoteA(entity: note, insertInto: writer),
            ]
            for object in objects { object.setValue("note", forKey: "title") }
            try writer.save()
            return objects[0].objectID
        }
        func faultClass() -> ManagedObject.Type {
            let context = container.newBackgroundContext()
            return context.performAndWait { type(of: context.object(with: id)) }
        }
        #expect(faultClass() == SwitchingNoteA.self)
        _ = SwitchingNoteB(entity: note, insertInto: nil)
        #expect(faultClass() == SwitchingNoteB.self)
        _ = SwitchingNoteA(entity: note, insertInto: nil)
        #expect(faultClass() == SwitchingNoteA.self)
        try container.close()
    }
}
