import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The registry's table against a dictionary: IDs in its pages, IDs that share their bits (one
/// key in two entity hierarchies or stores), IDs past the pages' reach, temporary IDs, pages
/// emptied and made again, and a reset.
@Suite struct UniquingTableTests {
    /// What the table must hold: for each registered object, the object, by ID.
    private struct Model {
        var objects: [ManagedObjectID: ManagedObject] = [:]
    }

    /// Random inserts, re-inserts under the same ID, removals (of the registered object, of
    /// another object with its ID, of many at once) and resets; after every step an ID looked
    /// up finds what the model holds and the count agrees with it, and at the end every ID and
    /// the objects listed do.
    @Test(arguments: [UInt64(1), 2, 3])
    func tableFollowsADictionary(seed: UInt64) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        let entities = [
            try #require(container.managedObjectModel.entitiesByName["Employee"]),
            try #require(container.managedObjectModel.entitiesByName["Department"]),
        ]
        var random = SplitMix64(seed: seed)
        let far = Int64(UniquingTable.groupLimit * UniquingTable.groupSize * UniquingTable.pageSize)
        // Keys that fill pages, keys on both sides of the pages' reach, and one key in two stores.
        var ids: [ManagedObjectID] = []
        for key in Int64(1)...300 {
            for entity in entities {
                ids.append(ManagedObjectID(entity: entity, storeIdentifier: "A", primaryKey: key))
            }
        }
        for key in [far - 1, far, far + 1, Int64.max] {
            ids.append(ManagedObjectID(entity: entities[0], storeIdentifier: "A", primaryKey: key))
        }
        ids.append(ManagedObjectID(entity: entities[0], storeIdentifier: "B", primaryKey: 7))
        for _ in 0..<40 { ids.append(ManagedObjectID(temporaryFor: entities[0])) }

        context.performAndWait {
            let table = UniquingTable()
            var model = Model()
            var alive: [ManagedObject] = []  // the table does not retain its objects
            for step in 0..<6_000 {
                let id = ids[Int(random.next() % UInt64(ids.count))]
                switch random.next() % 8 {
                case 0, 1, 2:
                    let object = ManagedObject.makeFault(id, context: context)
                    alive.append(object)
                    table.insert(object)
                    model.objects[id] = object
                case 3, 4:
                    if let object = model.objects[id] {
                        table.remove(object)
                        model.objects[id] = nil
                    }
                case 5:
                    // An object with the ID that is not the registered one leaves the entry alone.
                    let other = ManagedObject.makeFault(id, context: context)
                    alive.append(other)
                    table.remove(other)
                case 6:
                    break
                default:
                    // Every object whose key is `id`'s modulo 50 goes: whole pages empty, and
                    // are made again (or reused) by later inserts.
                    for (registered, object) in model.objects where registered.primaryKey % 50 == id.primaryKey % 50 {
                        table.remove(object)
                        model.objects[registered] = nil
                    }
                }
                if step % 2_000 == 1_999 {
                    table.removeAll()
                    model.objects = [:]
                }
                let probe = ids[Int(random.next() % UInt64(ids.count))]
                #expect(table[probe] === model.objects[probe], "step \(step): \(probe)")
                #expect(table.count == model.objects.count, "step \(step)")
            }
            for id in ids { #expect(table[id] === model.objects[id]) }
            #expect(
                Set(table.objects.map(ObjectIdentifier.init)) == Set(model.objects.values.map(ObjectIdentifier.init)))
            #expect(table.objects.count == model.objects.count)
            withExtendedLifetime(alive) {}
        }
    }
}
