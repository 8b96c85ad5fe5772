import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Inverse maintenance and delete rules, in memory and across save and reopen.
@Suite struct RelationshipTests {
    /// One model with a relationship of every shape:
    /// Citizen.passport <-> Passport.holder (one-to-one),
    /// Student.courses <<->> Course.students (many-to-many),
    /// Playlist.songs (ordered) <->> Song.playlist,
    /// Region.cities ->> City.streets ->> Street (cascade, cascade),
    /// Owner.pets (deny) <->> Pet.owner, Board.pins (no action) <->> Pin.board,
    /// Shelf.items ->> Trinket (no inverse).
    static func model() -> ManagedObjectModel {
        func named(_ name: String) -> EntityDescription {
            ModelBuilder.entity(name, [ModelBuilder.attribute("name", .string)])
        }
        let citizen = named("Citizen"), passport = named("Passport")
        ModelBuilder.inverse(
            ModelBuilder.relationship("passport", from: citizen, to: passport),
            ModelBuilder.relationship("holder", from: passport, to: citizen))
        let student = named("Student"), course = named("Course")
        ModelBuilder.inverse(
            ModelBuilder.relationship("courses", from: student, to: course, toMany: true),
            ModelBuilder.relationship("students", from: course, to: student, toMany: true))
        let playlist = named("Playlist"), song = named("Song")
        ModelBuilder.inverse(
            ModelBuilder.relationship("songs", from: playlist, to: song, toMany: true, isOrdered: true),
            ModelBuilder.relationship("playlist", from: song, to: playlist))
        let region = named("Region"), city = named("City"), street = named("Street")
        ModelBuilder.inverse(
            ModelBuilder.relationship("cities", from: region, to: city, toMany: true, deleteRule: .cascadeDeleteRule),
            ModelBuilder.relationship("region", from: city, to: region))
        ModelBuilder.inverse(
            ModelBuilder.relationship("streets", from: city, to: street, toMany: true, deleteRule: .cascadeDeleteRule),
            ModelBuilder.relationship("city", from: street, to: city))
        let owner = named("Owner"), pet = named("Pet")
        ModelBuilder.inverse(
            ModelBuilder.relationship("pets", from: owner, to: pet, toMany: true, deleteRule: .denyDeleteRule),
            ModelBuilder.relationship("owner", from: pet, to: owner))
        let shelf = named("Shelf"), trinket = named("Trinket")
        ModelBuilder.relationship("items", from: shelf, to: trinket, toMany: true)
        let board = named("Board"), pin = named("Pin")
        ModelBuilder.inverse(
            ModelBuilder.relationship("pins", from: board, to: pin, toMany: true, deleteRule: .noActionDeleteRule),
            ModelBuilder.relationship("board", from: pin, to: board))
        return ModelBuilder.model([
            citizen, passport, student, course, playlist, song, region, city, street, owner, pet, shelf, trinket, board,
            pin,
        ])
    }

    /// A new object of `entity` named `name`.
    static func make(_ entity: String, _ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let object = EntityDescription.insertNewObject(forEntityName: entity, into: context)
        object.setValue(name, forKey: "name")
        return object
    }

    /// A new department named `name`.
    static func department(_ name: String, in context: ManagedObjectContext) -> Department {
        let department = Department(context: context)
        department.name = name
        return department
    }

    /// A new employee named `name`, in `department` when one is given.
    static func employee(_ name: String, in context: ManagedObjectContext, department: Department? = nil) -> Employee {
        let employee = Employee(context: context)
        employee.name = name
        if let department { employee.department = department }
        return employee
    }

    /// The names of a relationship's objects: sorted for a set, in order for an ordered one.
    static func names(_ object: ManagedObject, _ key: String) throws -> [String] {
        switch object.value(forKey: key) {
        case let ordered as [ManagedObject]: return ordered.map { $0.value(forKey: "name") as! String }
        case let set as Set<ManagedObject>: return set.map { $0.value(forKey: "name") as! String }.sorted()
        case let single as ManagedObject: return [single.value(forKey: "name") as! String]
        default: return []
        }
    }

    /// The object of `entity` named `name` in `context`.
    static func fetch(_ entity: String, _ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = FetchPredicate(key: "name", .equalTo, name)
        return try #require(try context.fetch(request).first, "\(entity) \(name)")
    }

    /// Runs `body` on a new context of a container at `url` (the store is created when missing),
    /// then closes the container.
    static func withContext<T>(
        at url: URL, model: ManagedObjectModel = model(), _ body: (ManagedObjectContext) throws -> T
    ) throws -> T {
        let container = try GraphModel.container(at: url, model: model)
        let result: T
        do {
            let context = container.newBackgroundContext()
            result = try context.performAndWait { try body(context) }
        } catch {
            try? container.close()
            throw error
        }
        try container.close()
        return result
    }

    @Test func settingEitherSideUpdatesTheInverse() throws {
        let folder = TemporaryDirectory()
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let research = Self.department("Research", in: context)
            let ann = Self.employee("Ann", in: context)
            let bob = Self.employee("Bob", in: context)

            ann.department = research
            #expect(research.employees == [ann])
            let members = research.mutableSetValue(forKey: "employees")
            members.add(bob)
            #expect(bob.department === research)
            #expect(members.count == 2)
            #expect(members.contains(ann))
            members.remove(ann)
            #expect(ann.department == nil)
            #expect(research.employees == [bob])
            bob.setValue(nil, forKey: "department")
            #expect(research.employees.isEmpty)
            research.employees = [ann, bob]
            #expect(ann.department === research && bob.department === research)
            members.removeAllObjects()
            #expect(ann.department == nil && bob.department == nil)
            members.add(ann)
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let research = try #require(try context.fetch(Department.fetchRequest()).first)
            #expect(research.employees.map(\.name) == ["Ann"])
            let bob = try #require(try context.fetch(Employee.fetchRequest()).first { $0.name == "Bob" })
            #expect(bob.department == nil)
        }
    }

    @Test func movingAnEmployeeUpdatesBothDepartments() throws {
        let folder = TemporaryDirectory()
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let research = Self.department("Research", in: context)
            let sales = Self.department("Sales", in: context)
            let ann = Self.employee("Ann", in: context)
            ann.department = research
            ann.department = sales
            #expect(research.employees.isEmpty)
            #expect(sales.employees == [ann])
            research.mutableSetValue(forKey: "employees").add(ann)
            #expect(ann.department === research)
            #expect(sales.employees.isEmpty, "adding to one department takes the employee out of the other")
            sales.employees = [ann]
            #expect(research.employees.isEmpty)
            #expect(ann.department === sales)
            try context.save()
        }
        // Move a saved employee whose departments come from the store.
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let ann = try #require(try context.fetch(Employee.fetchRequest()).first)
            #expect(ann.department?.name == "Sales")
            let research = try #require(try context.fetch(Department.fetchRequest()).first { $0.name == "Research" })
            #expect(research.employees.isEmpty)
            ann.department = research
            #expect(research.employees == [ann])
            #expect(
                try context.fetch(Department.fetchRequest()).first { $0.name == "Sales" }?.employees.isEmpty == true)
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let departments = try context.fetch(Department.fetchRequest())
            #expect(departments.first { $0.name == "Research" }?.employees.map(\.name) == ["Ann"])
            #expect(departments.first { $0.name == "Sales" }?.employees.isEmpty == true)
        }
    }

    @Test func oneToOneRelationshipsStayPaired() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let alice = try Self.make("Citizen", "Alice", in: context)
            let bruno = try Self.make("Citizen", "Bruno", in: context)
            let red = try Self.make("Passport", "Red", in: context)
            let blue = try Self.make("Passport", "Blue", in: context)
            alice.setValue(red, forKey: "passport")
            #expect(red.value(forKey: "holder") as? ManagedObject === alice)
            bruno.setValue(red, forKey: "passport")
            #expect(alice.value(forKey: "passport") == nil, "the passport left its previous holder")
            #expect(red.value(forKey: "holder") as? ManagedObject === bruno)
            blue.setValue(bruno, forKey: "holder")
            #expect(bruno.value(forKey: "passport") as? ManagedObject === blue)
            #expect(red.value(forKey: "holder") == nil, "the holder's previous passport lost him")
            alice.setValue(red, forKey: "passport")
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            #expect(try Self.names(try Self.fetch("Citizen", "Alice", in: context), "passport") == ["Red"])
            #expect(try Self.names(try Self.fetch("Citizen", "Bruno", in: context), "passport") == ["Blue"])
            #expect(try Self.names(try Self.fetch("Passport", "Red", in: context), "holder") == ["Alice"])
            let blue = try Self.fetch("Passport", "Blue", in: context)
            #expect(try Self.names(blue, "holder") == ["Bruno"])
            blue.setValue(nil, forKey: "holder")
            #expect(try Self.fetch("Citizen", "Bruno", in: context).value(forKey: "passport") == nil)
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            #expect(try Self.fetch("Citizen", "Bruno", in: context).value(forKey: "passport") == nil)
            #expect(try Self.fetch("Passport", "Blue", in: context).value(forKey: "holder") == nil)
        }
    }

    @Test func manyToManyRelationshipsKeepBothSides() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let sam = try Self.make("Student", "Sam", in: context)
            let tia = try Self.make("Student", "Tia", in: context)
            let math = try Self.make("Course", "Math", in: context)
            let art = try Self.make("Course", "Art", in: context)
            let music = try Self.make("Course", "Music", in: context)
            sam.setValue(Set([math, art]), forKey: "courses")
            tia.mutableSetValue(forKey: "courses").add(art)
            music.mutableSetValue(forKey: "students").add(tia)
            #expect(try Self.names(math, "students") == ["Sam"])
            #expect(try Self.names(art, "students") == ["Sam", "Tia"])
            #expect(try Self.names(tia, "courses") == ["Art", "Music"])
            art.mutableSetValue(forKey: "students").remove(sam)
            #expect(try Self.names(sam, "courses") == ["Math"])
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let sam = try Self.fetch("Student", "Sam", in: context)
            let tia = try Self.fetch("Student", "Tia", in: context)
            #expect(try Self.names(sam, "courses") == ["Math"])
            #expect(try Self.names(tia, "courses") == ["Art", "Music"])
            #expect(try Self.names(try Self.fetch("Course", "Art", in: context), "students") == ["Tia"])
            // Change both sides of saved objects, and delete a course.
            sam.mutableSetValue(forKey: "courses").add(try Self.fetch("Course", "Music", in: context))
            try Self.fetch("Course", "Math", in: context).mutableSetValue(forKey: "students").add(tia)
            context.delete(try Self.fetch("Course", "Art", in: context))
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            #expect(try Self.names(try Self.fetch("Student", "Sam", in: context), "courses") == ["Math", "Music"])
            #expect(try Self.names(try Self.fetch("Student", "Tia", in: context), "courses") == ["Math", "Music"])
            #expect(try Self.names(try Self.fetch("Course", "Music", in: context), "students") == ["Sam", "Tia"])
            #expect(try Self.names(try Self.fetch("Course", "Math", in: context), "students") == ["Sam", "Tia"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Course")) == 2)
        }
    }

    @Test func orderedToManyKeepsItsOrderAcrossSaveAndReopen() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let mix = try Self.make("Playlist", "Mix", in: context)
            let songs = try ["one", "two", "three", "four"].map { try Self.make("Song", $0, in: context) }
            mix.setValue([songs[2], songs[0], songs[3]], forKey: "songs")
            let ordered = mix.mutableOrderedSetValue(forKey: "songs")
            ordered.insert(songs[1], at: 1)
            #expect(try Self.names(mix, "songs") == ["three", "two", "one", "four"])
            #expect(songs[1].value(forKey: "playlist") as? ManagedObject === mix)
            #expect(throws: CoreDataError.self) { _ = try mix.mutableOrderedSetValue(forCheckedKey: "name") }
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let mix = try Self.fetch("Playlist", "Mix", in: context)
            #expect(try Self.names(mix, "songs") == ["three", "two", "one", "four"])
            let ordered = mix.mutableOrderedSetValue(forKey: "songs")
            let four = try Self.fetch("Song", "four", in: context)
            ordered.insert(four, at: 0)  // move to the front
            ordered.remove(try Self.fetch("Song", "two", in: context))
            #expect(try Self.names(mix, "songs") == ["four", "three", "one"])
            #expect(try Self.fetch("Song", "two", in: context).value(forKey: "playlist") == nil)
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let mix = try Self.fetch("Playlist", "Mix", in: context)
            #expect(try Self.names(mix, "songs") == ["four", "three", "one"])
            #expect(try Self.names(try Self.fetch("Song", "one", in: context), "playlist") == ["Mix"])
            #expect(try Self.fetch("Song", "two", in: context).value(forKey: "playlist") == nil)
        }
    }

    @Test func toManyWithoutInverseSurvivesSaveAndReopen() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let shelf = try Self.make("Shelf", "top", in: context)
            let trinkets = try ["cup", "owl", "vase"].map { try Self.make("Trinket", $0, in: context) }
            shelf.setValue(Set(trinkets), forKey: "items")
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let shelf = try Self.fetch("Shelf", "top", in: context)
            #expect(try Self.names(shelf, "items") == ["cup", "owl", "vase"])
            shelf.mutableSetValue(forKey: "items").remove(try Self.fetch("Trinket", "owl", in: context))
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            #expect(try Self.names(try Self.fetch("Shelf", "top", in: context), "items") == ["cup", "vase"])
            #expect(
                try context.count(for: FetchRequest<ManagedObject>(entityName: "Trinket")) == 3,
                "removing from the relationship deletes nothing")
        }
    }

    @Test func movingBetweenOrderedRelationships() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let first = try Self.make("Playlist", "first", in: context)
            let second = try Self.make("Playlist", "second", in: context)
            let songs = try ["a", "b", "c"].map { try Self.make("Song", $0, in: context) }
            first.setValue(songs, forKey: "songs")
            second.setValue([try Self.make("Song", "z", in: context)], forKey: "songs")
            try context.save()
            songs[1].setValue(second, forKey: "playlist")
            #expect(try Self.names(first, "songs") == ["a", "c"])
            #expect(try Self.names(second, "songs") == ["z", "b"])
            context.delete(songs[0])
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            #expect(try Self.names(try Self.fetch("Playlist", "first", in: context), "songs") == ["c"])
            #expect(try Self.names(try Self.fetch("Playlist", "second", in: context), "songs") == ["z", "b"])
        }
    }

    @Test func deletesPropagateAtSaveWhenNotAtTheEndOfEachEvent() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.propagatesDeletesAtEndOfEvent = false
            let research = Self.department("Research", in: context)
            let ann = Self.employee("Ann", in: context, department: research)
            try context.save()
            context.delete(ann)
            context.processPendingChanges()
            #expect(research.employees == [ann], "not propagated yet")
            try context.save()
            #expect(research.employees.isEmpty, "propagated by the save")
        }
    }

    @Test func nullifyRemovesTheDeletedObjectFromTheOtherSide() throws {
        let folder = TemporaryDirectory()
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let research = Self.department("Research", in: context)
            let ann = Self.employee("Ann", in: context, department: research)
            let bob = Self.employee("Bob", in: context, department: research)
            try context.save()
            context.delete(ann)
            context.processPendingChanges()
            #expect(research.employees == [bob], "nullify applies at the end of the event")
            #expect(research.isUpdated)
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: GraphModel.make()) { context throws in
            let research = try #require(try context.fetch(Department.fetchRequest()).first)
            #expect(research.employees.map(\.name) == ["Bob"])
        }
        // Many-to-many nullify, on the other model.
        try Self.withContext(at: folder.store("Other")) { school throws in
            let sam = try Self.make("Student", "Sam", in: school)
            let math = try Self.make("Course", "Math", in: school)
            sam.setValue(Set([math]), forKey: "courses")
            try school.save()
            school.delete(sam)
            try school.save()
            #expect(try Self.names(math, "students").isEmpty)
        }
    }

    @Test func cascadeDeletesRecursively() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.withContext(at: folder.store(), model: model) { context throws in
            for regionName in ["North", "South"] {
                let region = try Self.make("Region", regionName, in: context)
                for cityIndex in 0..<2 {
                    let city = try Self.make("City", "\(regionName) city \(cityIndex)", in: context)
                    city.setValue(region, forKey: "region")
                    for streetIndex in 0..<3 {
                        let street = try Self.make(
                            "Street", "\(regionName) street \(cityIndex).\(streetIndex)", in: context)
                        street.setValue(city, forKey: "city")
                    }
                }
            }
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            let north = try Self.fetch("Region", "North", in: context)
            context.delete(north)
            context.processPendingChanges()
            #expect(context.deletedObjects.count == 1 + 2 + 6, "the region, its cities and their streets")
            try context.save()
        }
        try Self.withContext(at: folder.store(), model: model) { context throws in
            func count(_ entity: String) throws -> Int {
                try context.count(for: FetchRequest<ManagedObject>(entityName: entity))
            }
            #expect(try count("Region") == 1)
            #expect(try count("City") == 2)
            #expect(try count("Street") == 6)
            let streets = try context.fetch(FetchRequest<ManagedObject>(entityName: "Street"))
            #expect(streets.allSatisfy { ($0.value(forKey: "name") as! String).hasPrefix("South") })
        }
    }

    @Test func denyRefusesTheSaveAndKeepsTheChanges() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let olga = try Self.make("Owner", "Olga", in: context)
            let rex = try Self.make("Pet", "Rex", in: context)
            rex.setValue(olga, forKey: "owner")
            let lone = try Self.make("Owner", "Lone", in: context)
            try context.save()

            context.delete(olga)
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .validationRelationshipDeniedDelete)
            #expect(error?.objectID == olga.objectID)
            #expect(error?.key == "pets")
            #expect(olga.isDeleted, "the delete is still pending")
            #expect(context.deletedObjects == [olga])
            #expect(context.hasChanges)
            #expect(rex.value(forKey: "owner") as? ManagedObject === olga, "deny leaves the other side alone")

            context.delete(lone)
            context.delete(rex)
            try context.save()
            #expect(!context.hasChanges)
        }
        let remaining = try context.performAndWait {
            try context.count(for: FetchRequest<ManagedObject>(entityName: "Owner"))
                + context.count(for: FetchRequest<ManagedObject>(entityName: "Pet"))
        }
        #expect(remaining == 0)
    }

    @Test func noActionLeavesTheOtherSideAlone() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let board = try Self.make("Board", "Ideas", in: context)
            let pin = try Self.make("Pin", "Sketch", in: context)
            pin.setValue(board, forKey: "board")
            try context.save()
            context.delete(board)
            context.processPendingChanges()
            #expect(
                pin.value(forKey: "board") as? ManagedObject === board, "no action: the pin still points at the board")
            #expect(!pin.hasChanges)
            #expect(!pin.isDeleted)
            try context.save()
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Board")) == 0)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Pin")) == 1)
        }
    }
}
