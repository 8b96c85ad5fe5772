import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Relationship changes across a migration: to-one becoming to-many, and the order of an
/// ordered to-many relationship kept while the store is rewritten.
@Suite struct RelationshipMigrationTests {
    /// Owners and pets; `toMany` turns `pet` into `pets` (renaming identifier `pet`), `addsAge`
    /// adds an optional attribute (which rewrites the store).
    static func model(toMany: Bool, addsAge: Bool = false) -> ManagedObjectModel {
        let owner = ModelBuilder.entity(
            "Owner",
            [ModelBuilder.attribute("name", .string)] + (addsAge ? [ModelBuilder.attribute("age", .integer16)] : []))
        let pet = ModelBuilder.entity("Pet", [ModelBuilder.attribute("name", .string)])
        let pets = ModelBuilder.relationship(toMany ? "pets" : "pet", from: owner, to: pet, toMany: toMany)
        if toMany { pets.renamingIdentifier = "pet" }
        let ownerOfPet = ModelBuilder.relationship("owner", from: pet, to: owner)
        ModelBuilder.inverse(pets, ownerOfPet)
        let playlist = ModelBuilder.entity("Playlist", [ModelBuilder.attribute("title", .string)])
        let song = ModelBuilder.entity("Song", [ModelBuilder.attribute("title", .string)])
        ModelBuilder.relationship("songs", from: playlist, to: song, toMany: true, isOrdered: true)
        return ModelBuilder.model([owner, pet, playlist, song])
    }

    @Test func toOneBecomesToManyAndOrderIsKept() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Pets")
        let before = try GraphModel.container(at: url, model: Self.model(toMany: false))
        let context = before.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<12 {
                let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("owner\(i)", forKey: "name")
                if i.isMultiple(of: 3) { continue }
                let pet = EntityDescription.insertNewObject(forEntityName: "Pet", into: context)
                pet.setValue("pet\(i)", forKey: "name")
                owner.setValue(pet, forKey: "pet")
            }
            let songs = (0..<8).map { i in
                let song = EntityDescription.insertNewObject(forEntityName: "Song", into: context)
                song.setValue("song\(i)", forKey: "title")
                return song
            }
            let playlist = EntityDescription.insertNewObject(forEntityName: "Playlist", into: context)
            playlist.setValue("mix", forKey: "title")
            playlist.setValue([songs[5], songs[1], songs[7], songs[0], songs[3]], forKey: "songs")
            try context.save()
        }
        try before.close()

        for pass in ["migrated", "reopened"] {
            let after = try GraphModel.container(at: url, model: Self.model(toMany: true, addsAge: true))
            let reader = after.newBackgroundContext()
            try reader.performAndWait {
                let owners = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Owner"))
                #expect(owners.count == 12, "\(pass)")
                for owner in owners {
                    let name = try #require(owner.value(forKey: "name") as? String)
                    let i = try #require(Int(name.dropFirst(5)))
                    let pets = ShopModels.related(owner, "pets").compactMap { $0.value(forKey: "name") as? String }
                    #expect(pets == (i.isMultiple(of: 3) ? [] : ["pet\(i)"]), "\(pass): \(name)")
                }
                let playlist = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")).first)
                let titles = (playlist.value(forKey: "songs") as? [ManagedObject])?.compactMap {
                    $0.value(forKey: "title") as? String
                }
                #expect(titles == ["song5", "song1", "song7", "song0", "song3"], "\(pass): the order is kept")
                #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Song")) == 8, "\(pass)")
            }
            try after.close()
        }
    }
}
