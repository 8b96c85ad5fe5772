import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Lightweight migrations that change a relationship's inverse keep every link, as Core Data's
/// do: the links live in the stored side, whatever its inverse becomes.
@Suite struct InverseChangeMigrationTests {
    /// A model of owners and pets: `Owner.pets` and `Pet.owner` (or the relationships `change`
    /// makes instead), with an owner's many-to-many `Owner.clubs` and `Club.members`.
    private static func model(
        _ change: (_ owner: EntityDescription, _ pet: EntityDescription, _ club: EntityDescription) -> Void
    ) -> ManagedObjectModel {
        let owner = ModelBuilder.entity("Owner", [ModelBuilder.attribute("name", .string)])
        let pet = ModelBuilder.entity("Pet", [ModelBuilder.attribute("name", .string)])
        let club = ModelBuilder.entity("Club", [ModelBuilder.attribute("name", .string)])
        change(owner, pet, club)
        return ModelBuilder.model([owner, pet, club])
    }

    /// Version 1: `Owner.pets` ↔ `Pet.owner`, `Owner.clubs` ↔ `Club.members`.
    private static func version1() -> ManagedObjectModel {
        model { owner, pet, club in
            ModelBuilder.inverse(
                ModelBuilder.relationship("pets", from: owner, to: pet, toMany: true),
                ModelBuilder.relationship("owner", from: pet, to: owner, toMany: false))
            ModelBuilder.inverse(
                ModelBuilder.relationship("clubs", from: owner, to: club, toMany: true),
                ModelBuilder.relationship("members", from: club, to: owner, toMany: true))
        }
    }

    /// The later versions, each changing the inverses another way.
    private static let versions: [(String, @Sendable () -> ManagedObjectModel)] = [
        (
            "the to-many side removed, a fetched property in its place",
            {
                model { owner, pet, club in
                    _ = ModelBuilder.relationship("owner", from: pet, to: owner, toMany: false)
                    let request = FetchRequest<FetchRequestResult>(entityName: "Pet")
                    request.predicate = FetchPredicate(format: "owner == $FETCH_SOURCE")
                    owner.properties.append(FetchedPropertyDescription(name: "fetchedPets", fetchRequest: request))
                    ModelBuilder.inverse(
                        ModelBuilder.relationship("clubs", from: owner, to: club, toMany: true),
                        ModelBuilder.relationship("members", from: club, to: owner, toMany: true))
                }
            }
        ),
        (
            "the to-many side replaced by another name",
            {
                model { owner, pet, club in
                    ModelBuilder.inverse(
                        ModelBuilder.relationship("animals", from: owner, to: pet, toMany: true),
                        ModelBuilder.relationship("owner", from: pet, to: owner, toMany: false))
                    ModelBuilder.inverse(
                        ModelBuilder.relationship("societies", from: owner, to: club, toMany: true),
                        ModelBuilder.relationship("members", from: club, to: owner, toMany: true))
                }
            }
        ),
        (
            "the to-one side renamed with a renaming identifier",
            {
                model { owner, pet, club in
                    let keeper = ModelBuilder.relationship("keeper", from: pet, to: owner, toMany: false)
                    keeper.renamingIdentifier = "owner"
                    ModelBuilder.inverse(ModelBuilder.relationship("pets", from: owner, to: pet, toMany: true), keeper)
                    let people = ModelBuilder.relationship("people", from: club, to: owner, toMany: true)
                    people.renamingIdentifier = "members"
                    ModelBuilder.inverse(
                        ModelBuilder.relationship("clubs", from: owner, to: club, toMany: true), people)
                }
            }
        ),
    ]

    @Test(arguments: 0..<3) func linksSurviveAnInverseChange(_ index: Int) throws {
        let (label, later) = Self.versions[index]
        let folder = TemporaryDirectory()
        let url = folder.store("Pets")
        let first = try GraphModel.container(at: url, model: Self.version1())
        let context = first.newBackgroundContext()
        try context.performAndWait {
            let club = EntityDescription.insertNewObject(forEntityName: "Club", into: context)
            club.setValue("Cats", forKey: "name")
            for n in 0..<3 {
                let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("Owner \(n)", forKey: "name")
                if n > 0 { owner.mutableSetValue(forKey: "clubs").add(club) }
                for p in 0..<n {
                    let pet = EntityDescription.insertNewObject(forEntityName: "Pet", into: context)
                    pet.setValue("Pet \(n).\(p)", forKey: "name")
                    pet.setValue(owner, forKey: "owner")
                }
            }
            try context.save()
        }
        try first.close()
        for pass in ["migrated", "reopened"] {
            let container = try GraphModel.container(at: url, model: later())
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let pets = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Pet"))
                #expect(pets.count == 3, "\(label), \(pass)")
                let toOne = pets.first?.entity.relationshipsByName["owner"] != nil ? "owner" : "keeper"
                for pet in pets {
                    let name = pet.value(forKey: "name") as? String ?? ""
                    let owner = pet.value(forKey: toOne) as? ManagedObject
                    #expect(
                        owner?.value(forKey: "name") as? String == "Owner \(name.dropFirst(4).prefix(1))",
                        "\(label), \(pass): \(name)")
                }
                let owners = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Owner"))
                let toMany = owners.first?.entity.relationshipsByName["pets"] != nil ? "pets" : "animals"
                let clubs = owners.first?.entity.relationshipsByName["clubs"] != nil ? "clubs" : "societies"
                for owner in owners {
                    let name = owner.value(forKey: "name") as? String ?? ""
                    let n = Int(name.dropFirst(6)) ?? -1
                    if owner.entity.propertiesByName["fetchedPets"] != nil {
                        #expect(
                            (owner.value(forKey: "fetchedPets") as? [ManagedObject])?.count == n,
                            "\(label), \(pass): \(name)'s fetched pets")
                    }
                    if owner.entity.relationshipsByName[toMany] != nil {
                        #expect(
                            (owner.value(forKey: toMany) as? Set<ManagedObject>)?.count == n,
                            "\(label), \(pass): \(name)'s pets")
                    }
                    #expect(
                        (owner.value(forKey: clubs) as? Set<ManagedObject>)?.count == (n > 0 ? 1 : 0),
                        "\(label), \(pass): \(name)'s clubs")
                }
            }
            try container.close()
        }
    }
}
