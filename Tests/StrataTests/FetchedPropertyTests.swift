import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Fetched properties (Core Data's `NSFetchedPropertyDescription`): a fetch request evaluated
/// when the property is read, with `$FETCH_SOURCE` and `$FETCHED_PROPERTY`, kept until the
/// object is refreshed, never stored.
@Suite struct FetchedPropertyTests {
    /// A journal store with one owner, two notebooks and their entries, saved.
    static func populated(
        _ context: ManagedObjectContext
    ) throws -> (owner: ManagedObject, travel: ManagedObject, recipes: ManagedObject) {
        let owner = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
        owner.setValue("Ada", forKey: "name")
        var notebooks: [ManagedObject] = []
        for (title, entries) in [
            ("Travel", [("Lisbon", true, "swift trip"), ("Porto", false, "slow"), ("Faro", true, nil)]),
            ("Recipes", [("Soup", true, "Swift soup"), ("Bread", false, "swift bread")]),
        ] {
            let notebook = EntityDescription.insertNewObject(forEntityName: "Notebook", into: context)
            notebook.setValue(title, forKey: "title")
            notebook.setValue(owner, forKey: "owner")
            for (name, pinned, body) in entries {
                let entry = EntityDescription.insertNewObject(forEntityName: "TextEntry", into: context)
                entry.setValue(name, forKey: "title")
                entry.setValue(pinned, forKey: "isPinned")
                entry.setValue(body, forKey: "body")
                entry.setValue(notebook, forKey: "notebook")
            }
            notebooks.append(notebook)
        }
        try context.save()
        return (owner, notebooks[0], notebooks[1])
    }

    /// The sorted titles of an array of entries.
    static func titles(_ value: Any?) throws -> [String] {
        let objects = try #require(value as? [ManagedObject])
        return try objects.map { try #require($0.value(forKey: "title") as? String) }.sorted()
    }

    @Test func aFetchedPropertyIsItsRequestEvaluatedForTheObject() throws {
        let model = try RealWorldModelTests.model("Journal")
        let property = try #require(
            model.entitiesByName["Notebook"]?.propertiesByName["pinnedEntries"] as? FetchedPropertyDescription)
        #expect(property.fetchRequest?.entity?.name == "Entry")
        #expect(property.fetchRequest?.predicate?.predicateFormat == "notebook == $FETCH_SOURCE AND isPinned == YES")
        #expect(property.isOptional)
        #expect(model.entitiesByName["Notebook"]?.attributesByName["pinnedEntries"] == nil)

        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let (owner, travel, recipes) = try Self.populated(context)
            #expect(try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon"])
            #expect(try Self.titles(recipes.value(forKey: "pinnedEntries")) == ["Soup"])
            #expect(
                try Self.titles(travel.value(forKey: "keywordEntries")) == ["Lisbon"],
                "$FETCHED_PROPERTY.userInfo.keyword")
            #expect(try Self.titles(recipes.value(forKey: "keywordEntries")) == ["Bread", "Soup"])
            #expect(
                try Self.titles(owner.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon", "Soup"],
                "through notebook.owner")
            #expect(!context.hasChanges, "reading a fetched property changes nothing")
            #expect(travel.changedValues().isEmpty)
        }
        try container.close()
    }

    /// The value is kept until the object is refreshed, as Core Data's; a fetched property
    /// sees unsaved objects, as fetches do.
    @Test func theValueIsKeptUntilTheObjectIsRefreshed() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: try RealWorldModelTests.model("Journal"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let (_, travel, _) = try Self.populated(context)
            #expect(try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon"])
            let porto = try #require(
                (travel.value(forKey: "entries") as? Set<ManagedObject>)?.first {
                    $0.value(forKey: "title") as? String == "Porto"
                })
            porto.setValue(true, forKey: "isPinned")
            try context.save()
            #expect(
                try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon"],
                "not re-fetched before a refresh")
            context.refresh(travel, mergeChanges: true)
            #expect(try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon", "Porto"])

            let draft = EntityDescription.insertNewObject(forEntityName: "TextEntry", into: context)
            draft.setValue("Draft", forKey: "title")
            draft.setValue(true, forKey: "isPinned")
            draft.setValue(travel, forKey: "notebook")
            context.refresh(travel, mergeChanges: true)
            #expect(
                try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Draft", "Faro", "Lisbon", "Porto"],
                "unsaved objects match")
            context.rollback()
            context.refresh(travel, mergeChanges: false)
            #expect(try Self.titles(travel.value(forKey: "pinnedEntries")) == ["Faro", "Lisbon", "Porto"])
        }
        try container.close()
    }

    /// Fetched properties are not stored: the store's layout and the entity's version hash
    /// ignore them, and a reopened store evaluates them afresh.
    @Test func fetchedPropertiesAreNotStored() throws {
        func model(withFetchedProperty: Bool) -> ManagedObjectModel {
            let title = ModelBuilder.attribute("title", .string)
            let entity = ModelBuilder.entity("Note", [title])
            if withFetchedProperty {
                let request = FetchRequest<FetchRequestResult>(entityName: "Note")
                request.predicate = FetchPredicate(format: "title BEGINSWITH 'a' AND SELF != $FETCH_SOURCE")
                entity.properties.append(FetchedPropertyDescription(name: "others", fetchRequest: request))
            }
            return ModelBuilder.model([entity])
        }
        #expect(
            model(withFetchedProperty: true).entitiesByName["Note"]?.versionHash
                == model(withFetchedProperty: false).entitiesByName["Note"]?.versionHash)
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: model(withFetchedProperty: false))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for title in ["apple", "avocado", "banana"] {
                    EntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue(
                        title, forKey: "title")
                }
                try context.save()
            }
            try container.close()
        }
        // The store written without the fetched property opens with it: the layout is the same.
        let container = try GraphModel.container(at: folder.store(), model: model(withFetchedProperty: true))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = try FetchPredicate(checkedFormat: "title == 'apple'")
            let apple = try #require(try context.fetch(request).first)
            #expect(try Self.titles(apple.value(forKey: "others")) == ["avocado"])
        }
        try container.close()
    }

    /// A typed subclass reads a fetched property through `@Managed`, as generated Core Data
    /// classes read theirs with `@NSManaged`.
    @Test func managedPropertiesReadFetchedProperties() throws {
        let title = ModelBuilder.attribute("title", .string)
        let entity = ModelBuilder.entity("FetchedNote", [title], className: "FetchedNote")
        let request = FetchRequest<FetchRequestResult>(entityName: "FetchedNote")
        request.predicate = try FetchPredicate(
            checkedFormat: "title BEGINSWITH $FETCH_SOURCE.title AND SELF != $FETCH_SOURCE")
        request.sortDescriptors = [FetchSortDescriptor(key: "title", ascending: true)]
        entity.properties.append(FetchedPropertyDescription(name: "longer", fetchRequest: request))
        FetchedNote.register(for: "FetchedNote")
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var notes: [FetchedNote] = []
            for text in ["ab", "abc", "abd", "b"] {
                let note = FetchedNote(context: context)
                note.title = text
                notes.append(note)
            }
            try context.save()
            #expect(notes[0].longer.map(\.title) == ["abc", "abd"])
            #expect(notes[3].longer.isEmpty)
        }
        try container.close()
    }

    @Test func aFetchedPropertyWithoutARequestIsRefusedAtLoad() throws {
        let folder = TemporaryDirectory()
        let url = try ModelFileFixture.write(
            """
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <fetchedProperty name="related" optional="YES"/>
            </entity>
            """, in: folder)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: url) }
        #expect(error?.code == .invalidModel)
        #expect(error?.entityName == "Note")
        #expect(error?.propertyName == "related")

        let missing = try ModelFileFixture.write(
            """
            <entity name="Note" representedClassName="Note" syncable="YES">
                <fetchedProperty name="related" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Nothing" predicateString="TRUEPREDICATE"/>
                </fetchedProperty>
            </entity>
            """, in: folder, name: "Missing")
        let second = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: missing) }
        #expect(second?.code == .missingEntity)
        #expect(second?.message.contains("Nothing") == true)
    }

    /// A predicate naming a key the fetched entity lacks fails the read with a typed error.
    @Test func aBadPredicateFailsTheReadWithAnError() throws {
        let title = ModelBuilder.attribute("title", .string)
        let entity = ModelBuilder.entity("Note", [title])
        let request = FetchRequest<FetchRequestResult>(entityName: "Note")
        request.predicate = try FetchPredicate(checkedFormat: "missing == $FETCH_SOURCE")
        entity.properties.append(FetchedPropertyDescription(name: "broken", fetchRequest: request))
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let note = EntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("x", forKey: "title")
            try context.save()
            let error = #expect(throws: CoreDataError.self) { try note.value(forCheckedKey: "broken") }
            #expect(error?.key == "broken")
            #expect(error?.message.contains("missing") == true, "\(error?.message ?? "")")
            #expect(note.value(forKey: "title") as? String == "x", "the object is intact")
        }
        try container.close()
    }

    @Test func settingAFetchedPropertyThrowsAndChangesNothing() throws {
        let title = ModelBuilder.attribute("title", .string)
        let entity = ModelBuilder.entity("Note", [title])
        let request = FetchRequest<FetchRequestResult>(entityName: "Note")
        entity.properties.append(FetchedPropertyDescription(name: "all", fetchRequest: request))
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let note = EntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("x", forKey: "title")
            try context.save()
            for set in [note.setValue(_:forCheckedKey:), note.setPrimitiveValue(_:forCheckedKey:)] {
                let error = #expect(throws: CoreDataError.self) { try set([note], "all") }
                #expect(error?.code == .keyValueValidation)
                #expect(error?.key == "all")
                #expect(error?.message.contains("fetched property") == true, "\(error?.message ?? "")")
            }
            #expect(!context.hasChanges, "nothing was set")
            #expect(try (note.value(forCheckedKey: "all") as? [ManagedObject])?.count == 1)
        }
        try container.close()
    }
}

/// A subclass whose `longer` fetched property lists the notes whose title extends its own.
final class FetchedNote: ManagedObject {
    @Managed var title: String
    @Managed var longer: [FetchedNote]
}
