import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Real-world-shaped Xcode models (a versioned journal app, a commerce back office): every
/// entity of each loads, and objects of every entity round-trip through save, reopen and fault.
@Suite(.serialized) struct RealWorldModelTests {
    /// The models, by a short name.
    static let models: [String: URL] = [
        "Journal": Bundle.module.url(forResource: "Journal", withExtension: "xcdatamodeld", subdirectory: "Models")!,
        "Journal 1": Bundle.module.url(
            forResource: "Journal", withExtension: "xcdatamodel", subdirectory: "Models/Journal.xcdatamodeld")!,
        "Commerce": Bundle.module.url(forResource: "Commerce", withExtension: "xcdatamodel", subdirectory: "Models")!,
        "Podcasts": Bundle.module.url(forResource: "Podcasts", withExtension: "xcdatamodel", subdirectory: "Models")!,
    ]

    /// Registers the custom transformers the models name.
    static func registerTransformers() {
        for name in ["JournalEXIFTransformer", "JournalPreferencesTransformer", "CMDimensionsTransformer"] {
            ValueTransformers.register(PropertyListValueTransformer(), forName: name)
        }
    }

    /// A loaded model.
    static func model(_ name: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(checkedContentsOf: try #require(models[name]))
    }

    @Test(arguments: ["Journal", "Journal 1", "Commerce", "Podcasts"])
    func everyEntityRoundTrips(_ name: String) throws {
        Self.registerTransformers()
        let folder = TemporaryDirectory()
        let (container, snapshots) = try SampleModelTests.storeEverything(
            try Self.model(name), reload: { try Self.model(name) }, at: folder.store(name))
        #expect(snapshots.count == container.managedObjectModel.entities.filter { !$0.isAbstract }.count * 2)
        // Faults of every entity fire from the reopened store.
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for uri in snapshots.keys {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: URL(string: uri)!))
                let object = context.object(with: id)
                #expect(object.isFault)
                let attributes = object.entity.attributesByName.values.filter { !$0.isTransient }
                for attribute in attributes {
                    _ = object.value(forKey: attribute.name)
                }
                #expect(!object.isFault)
            }
        }
        try container.close()
    }

    @Test func versionedJournalLoadsItsCurrentVersion() throws {
        let model = try Self.model("Journal")
        #expect(model.versionIdentifiers == ["2"])
        #expect(model.entities.count == 8)
        let live = try #require(model.entitiesByName["LivePhotoEntry"])
        #expect(live.inheritanceChain.map(\.name) == ["Entry", "MediaEntry", "PhotoEntry", "LivePhotoEntry"])
        #expect(live.attributesByName["location"] is CompositeAttributeDescription)
        #expect(
            live.attributesByName["notebookTitle"] is DerivedAttributeDescription, "derived attributes are inherited")
        #expect(model.configurations == ["Cloud", "Local"])
        #expect(model.entities(forConfigurationName: "Cloud")?.map(\.name) == ["Tag"])
        let entry = try #require(model.entitiesByName["Entry"])
        #expect(entry.userInfo?["kind"] as? String == "abstract")
        #expect(entry.attributesByName["title"]?.userInfo?["searchable"] as? String == "YES")
        let exif = try #require(model.entitiesByName["PhotoEntry"]?.attributesByName["exif"])
        #expect(exif.valueTransformerName == "JournalEXIFTransformer")
        #expect(exif.attributeValueClassName == "[String: String]")
        let old = try Self.model("Journal 1")
        #expect(old.versionIdentifiers == ["1"])
        #expect(old.entities.map(\.name) == ["Entry", "Notebook", "TextEntry"])
    }

    /// Xcode writes `NO`, `YES` and `0.0` as defaults of integer attributes and `0`/`1` for
    /// Booleans; each loads as the attribute's type.
    @Test func xcodeDefaultFormsLoadAsTheAttributeType() throws {
        let journal = try Self.model("Journal")
        let entry = try #require(journal.entitiesByName["Entry"]?.attributesByName)
        #expect(entry["mood"]?.defaultValue as? Int16 == 1)
        #expect(entry["wordCount"]?.defaultValue as? Int32 == 0)
        #expect(entry["amount"]?.defaultValue as? Decimal == 0)
        #expect(entry["rating"]?.defaultValue as? Float == 0)
        #expect(entry["score"]?.defaultValue as? Double == 0)
        let notebook = try #require(journal.entitiesByName["Notebook"]?.attributesByName)
        #expect(notebook["sortOrder"]?.defaultValue as? Int64 == 0)
        #expect(notebook["isArchived"]?.defaultValue as? Bool == false)
        let commerce = try Self.model("Commerce")
        let customer = try #require(commerce.entitiesByName["Customer"]?.attributesByName)
        #expect(customer["newsletter"]?.defaultValue as? Bool == true)
        #expect(customer["loyaltyPoints"]?.defaultValue as? Int64 == 0)
        #expect(commerce.entitiesByName["Supplier"]?.attributesByName["leadTimeDays"]?.defaultValue as? Int32 == 1)
        #expect(commerce.entitiesByName["LineItem"]?.attributesByName["quantity"]?.defaultValue as? Int16 == 1)
        #expect(commerce.entitiesByName["Product"]?.attributesByName["price"]?.defaultValue as? Decimal == 0)
    }

    /// A default that is not a value of the attribute's type loads as no default, as Core Data
    /// loads it (``ModelQuirkTests`` has the other types).
    @Test func aFractionalIntegerDefaultGivesNoDefault() throws {
        let folder = TemporaryDirectory()
        let url = try ModelFileFixture.write(
            """
            <entity name="Invoice" representedClassName="Invoice" syncable="YES">
                <attribute name="copies" attributeType="Integer 32" defaultValueString="2.5" usesScalarValueType="YES"/>
            </entity>
            """, in: folder)
        let model = try ManagedObjectModel(checkedContentsOf: url)
        let copies = try #require(model.entitiesByName["Invoice"]?.attributesByName["copies"])
        #expect(copies.defaultValue == nil)
    }

    /// Broken compound indexes and composite definitions are refused with the element's line.
    @Test(arguments: [
        (
            """
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <compoundIndexes>
                    <compoundIndex>
                        <index value="title"/>
                        <index value="missing"/>
                    </compoundIndex>
                </compoundIndexes>
            </entity>
            """, "missingProperty", "missing"
        ),
        (
            """
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="place" optional="YES" attributeType="Composite" composite="Nowhere"/>
            </entity>
            """, "missingEntity", "Nowhere"
        ),
        (
            """
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="place" optional="YES" attributeType="Composite" composite="Loop"/>
            </entity>
            <composite name="Loop">
                <attribute name="inner" optional="YES" attributeType="Composite" composite="Loop"/>
            </composite>
            """, "invalidModel", "within itself"
        ),
    ])
    func brokenIndexesAndCompositesAreRefused(_ body: String, _ code: String, _ mention: String) throws {
        let folder = TemporaryDirectory()
        let url = try ModelFileFixture.write(body, in: folder)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: url) }
        #expect(error?.code.name == code)
        #expect(error?.entityName == "Item")
        #expect(error?.message.contains(mention) == true, "\(error?.message ?? "")")
        #expect(error?.line != nil)
    }

    /// Legacy `<compoundIndexes>` become fetch indexes the store keeps and fetches use.
    @Test func compoundIndexesAreFetchIndexes() throws {
        let journal = try Self.model("Journal")
        let entry = try #require(journal.entitiesByName["Entry"])
        #expect(entry.indexes.map(\.name) == ["byCreatedAt", "compoundIndex1", "compoundIndex2"])
        #expect(entry.indexes[1].elements.map(\.propertyName) == ["title", "createdAt"])
        #expect(entry.indexes[2].elements.map(\.propertyName) == ["isPinned"])
        let commerce = try Self.model("Commerce")
        #expect(commerce.entitiesByName["Party"]?.indexes.map(\.name) == ["compoundIndex1"])
        #expect(
            commerce.entitiesByName["Order"]?.indexes.first?.elements.map(\.propertyName) == ["customer", "placedAt"])
        #expect(
            commerce.entitiesByName["Category"]?.indexes.map(\.name) == ["nameIndex"], "indexed=YES stays a fetch index"
        )

        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: journal)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<20 {
                let text = EntityDescription.insertNewObject(forEntityName: "TextEntry", into: context)
                text.setValue("entry \(index)", forKey: "title")
                text.setValue(index % 5 == 0, forKey: "isPinned")
            }
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Entry")
            request.predicate = try FetchPredicate(checkedFormat: "isPinned == YES")
            #expect(try context.fetch(request).count == 4)
            #expect(
                try context.explain(request).description.contains("isPinned"), "the compound index on isPinned answers")
        }
        try container.close()
    }

    /// An Objective-C era model: `syncable`, `indexed="YES"`, unnamed transformers, defaults
    /// written `0`, `NO`, `YES` and `0.0`, a five-level hierarchy, fetched properties with a limit.
    @Test func legacyPodcastsModelLoads() throws {
        let model = try Self.model("Podcasts")
        #expect(model.entities.count == 11)
        #expect(model.versionIdentifiers == ["4.2"])
        let premium = try #require(model.entitiesByName["PremiumBonusEpisode"])
        #expect(
            premium.inheritanceChain.map(\.name) == ["Episode", "AudioEpisode", "BonusEpisode", "PremiumBonusEpisode"])
        #expect(premium.attributesByName["tier"]?.defaultValue as? Int16 == 1)
        #expect(premium.attributesByName["bitrate"]?.defaultValue as? Int32 == 0)
        #expect(premium.attributesByName["title"]?.renamingIdentifier == "name")
        let episode = try #require(model.entitiesByName["Episode"])
        #expect(episode.indexes.map(\.name) == ["guidIndex", "compoundIndex1"])
        let feed = try #require(model.entitiesByName["Feed"])
        #expect(feed.attributesByName["feedURL"]?.versionHashModifier == "2")
        #expect(feed.attributesByName["sortIndex"]?.defaultValue as? Int32 == 1)
        #expect((feed.propertiesByName["recentEpisodes"] as? FetchedPropertyDescription)?.fetchRequest?.fetchLimit == 5)
        #expect(model.entitiesByName["Subscription"]?.attributesByName["playbackSpeed"]?.defaultValue as? Float == 1)
        #expect(model.entitiesByName["Subscription"]?.attributesByName["autoDownload"]?.defaultValue as? Bool == true)

        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let feed = EntityDescription.insertNewObject(forEntityName: "Feed", into: context)
            feed.setValue("Accidental Tech", forKey: "title")
            feed.setValue("https://example.com/atp.xml", forKey: "feedURL")
            for index in 0..<8 {
                let kind = ["AudioEpisode", "VideoEpisode", "PremiumBonusEpisode"][index % 3]
                let episode = EntityDescription.insertNewObject(forEntityName: kind, into: context)
                episode.setValue("Episode \(index)", forKey: "title")
                episode.setValue("guid-\(index)", forKey: "guid")
                episode.setValue(index < 3, forKey: "listened")
                episode.setValue(feed, forKey: "feed")
            }
            try context.save()
            #expect((feed.value(forKey: "unplayedEpisodes") as? [ManagedObject])?.count == 5)
            #expect(
                (feed.value(forKey: "recentEpisodes") as? [ManagedObject])?.count == 5, "the request's limit applies")
            let byURL = try #require(
                model.fetchRequestFromTemplate(
                    withName: "FeedByURL", substitutionVariables: ["URL": "https://example.com/atp.xml"]))
            #expect(try context.fetch(byURL) as? [ManagedObject] == [feed])
        }
        try container.close()
    }

    @Test func fetchRequestTemplatesLoadAndSubstitute() throws {
        let model = try Self.model("Journal")
        #expect(
            Set(model.fetchRequestTemplatesByName.keys) == [
                "EntriesWithTitlePrefix", "NotebooksOwnedBy", "PinnedEntries",
            ])
        let template = try #require(model.fetchRequestTemplate(forName: "EntriesWithTitlePrefix"))
        #expect(template.entity?.name == "Entry")
        #expect(template.fetchLimit == 20)
        #expect(template.predicate?.predicateFormat == "title BEGINSWITH $PREFIX")
        #expect(model.fetchRequestTemplate(forName: "Missing") == nil)
        #expect(model.fetchRequestFromTemplate(withName: "Missing", substitutionVariables: [:]) == nil)

        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for title in ["Alpha", "Alps", "Beta"] {
                let entry = EntityDescription.insertNewObject(forEntityName: "TextEntry", into: context)
                entry.setValue(title, forKey: "title")
            }
            let owner = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
            owner.setValue("Ada", forKey: "name")
            let notebook = EntityDescription.insertNewObject(forEntityName: "Notebook", into: context)
            notebook.setValue(owner, forKey: "owner")
            try context.save()

            let request = try #require(
                model.fetchRequestFromTemplate(
                    withName: "EntriesWithTitlePrefix", substitutionVariables: ["PREFIX": "Al"]))
            request.sortDescriptors = [FetchSortDescriptor(key: "title", ascending: true)]
            #expect(
                try context.fetch(request).map { ($0 as? ManagedObject)?.value(forKey: "title") as? String } == [
                    "Alpha", "Alps",
                ])
            #expect(template.predicate?.predicateFormat == "title BEGINSWITH $PREFIX", "the template is unchanged")
            #expect(template.sortDescriptors == nil)
            let owned = try #require(
                model.fetchRequestFromTemplate(withName: "NotebooksOwnedBy", substitutionVariables: ["NAME": "Ada"]))
            #expect(try context.fetch(owned) as? [ManagedObject] == [notebook])
        }
        try container.close()
    }
}

/// Programmer errors around the model features, which stop the process as Core Data raises.
@Suite struct ModelFeatureTrapTests {
    @Test("a template variable without a value traps")
    func missingTemplateVariableTraps() async {
        await #expect(processExitsWith: .failure) {
            let model = ManagedObjectModel()
            let request = FetchRequest<FetchRequestResult>(entityName: "Item")
            request.predicate = FetchPredicate(format: "name == $NAME")
            model.setFetchRequestTemplate(request, forName: "ByName")
            _ = model.fetchRequestFromTemplate(withName: "ByName", substitutionVariables: [:])
        }
    }

    @Test("a composite's element is frozen with its model")
    func compositeElementSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let element = AttributeDescription(name: "city", type: .string)
            let composite = CompositeAttributeDescription(name: "address", elements: [element])
            let model = ManagedObjectModel()
            model.entities = [EntityDescription(name: "Item", properties: [composite])]
            model.freeze()
            element.name = "town"
        }
    }

    @Test("setting a template after freezing traps")
    func templateSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let model = ManagedObjectModel()
            model.freeze()
            model.setFetchRequestTemplate(FetchRequest<FetchRequestResult>(entityName: "Item"), forName: "All")
        }
    }
}

/// Writes one-off model files for loading tests.
enum ModelFileFixture {
    /// A `contents` file in `folder` whose model holds `body` (its first line is line 3).
    static func write(_ body: String, in folder: TemporaryDirectory, name: String = "Fixture") throws -> URL {
        let url = folder.url.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let text = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            \(body)
            </model>
            """
        try Data(text.utf8).write(to: url.appendingPathComponent("contents"))
        return url
    }
}
