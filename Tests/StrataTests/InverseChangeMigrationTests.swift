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
        let model = ManagedObjectModel()
        model.entities = [owner, pet, club]
        return model
    }

    /// A relationship `name` of `source` to `destination`.
    private static func relationship(
        _ name: String, _ source: EntityDescription, _ destination: EntityDescription, toMany: Bool
    ) -> RelationshipDescription {
        let relationship = RelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        source.properties.append(relationship)
        return relationship
    }

    /// Sets `a` and `b` as each other's inverse.
    private static func pair(_ a: RelationshipDescription, _ b: RelationshipDescription) {
        a.inverseRelationship = b
        b.inverseRelationship = a
    }

    /// Version 1: `Owner.pets` ↔ `Pet.owner`, `Owner.clubs` ↔ `Club.members`.
    private static func version1() -> ManagedObjectModel {
        model { owner, pet, club in
            pair(relationship("pets", owner, pet, toMany: true), relationship("owner", pet, owner, toMany: false))
            pair(relationship("clubs", owner, club, toMany: true), relationship("members", club, owner, toMany: true))
        }
    }

    /// The later versions, each changing the inverses another way.
    private static let versions: [(String, @Sendable () -> ManagedObjectModel)] = [
        (
            "the to-many side removed, a fetched property in its place",
            {
                model { owner, pet, club in
                    _ = relationship("owner", pet, owner, toMany: false)
                    let request = FetchRequest<FetchRequestResult>(entityName: "Pet")
                    request.predicate = FetchPredicate(format: "owner == $FETCH_SOURCE")
                    owner.properties.append(FetchedPropertyDescription(name: "fetchedPets", fetchRequest: request))
                    pair(
                        relationship("clubs", owner, club, toMany: true),
                        relationship("members", club, owner, toMany: true))
                }
            }
        ),
        (
            "the to-many side replaced by another name",
            {
                model { owner, pet, club in
                    pair(
                        relationship("animals", owner, pet, toMany: true),
                        relationship("owner", pet, owner, toMany: false))
                    pair(
                        relationship("societies", owner, club, toMany: true),
                        relationship("members", club, owner, toMany: true))
                }
            }
        ),
        (
            "the to-one side renamed with a renaming identifier",
            {
                model { owner, pet, club in
                    let keeper = relationship("keeper", pet, owner, toMany: false)
                    keeper.renamingIdentifier = "owner"
                    pair(relationship("pets", owner, pet, toMany: true), keeper)
                    let people = relationship("people", club, owner, toMany: true)
                    people.renamingIdentifier = "members"
                    pair(relationship("clubs", owner, club, toMany: true), people)
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
