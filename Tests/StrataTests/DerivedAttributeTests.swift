import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Derived attributes (Core Data's `NSDerivedAttributeDescription`): computed on save from the
/// object and its related objects, stored, refused when their expression is not supported.
@Suite struct DerivedAttributeTests {
    static func journal() throws -> ManagedObjectModel { try RealWorldModelTests.model("Journal") }

    /// The object whose URI is `uri`, in `context` of `container`.
    static func object(
        _ uri: URL, in container: PersistentContainer, _ context: ManagedObjectContext
    ) throws -> ManagedObject {
        let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
        return try context.existingObject(with: id)
    }

    /// Inserts a notebook titled `title` with entries of `words` word counts.
    static func notebook(_ title: String, words: [Int32], in context: ManagedObjectContext) throws -> ManagedObject {
        let notebook = EntityDescription.insertNewObject(forEntityName: "Notebook", into: context)
        notebook.setValue(title, forKey: "title")
        for (index, count) in words.enumerated() {
            let entry = EntityDescription.insertNewObject(forEntityName: "TextEntry", into: context)
            entry.setValue("\(title) \(index)", forKey: "title")
            entry.setValue(count, forKey: "wordCount")
            entry.setValue(notebook, forKey: "notebook")
        }
        return notebook
    }

    @Test func valuesAreComputedOnSaveAndStored() throws {
        let folder = TemporaryDirectory()
        var notebookURI: URL?
        var savedAt = Date.distantPast
        do {
            let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let notebook = try Self.notebook("Café Notes", words: [120, 30, 7], in: context)
                #expect(notebook.value(forKey: "entryCount") == nil, "not computed before the save")
                let before = Date()
                try context.save()
                savedAt = try #require(notebook.value(forKey: "lastModified") as? Date)
                #expect(savedAt >= before && savedAt <= Date())
                #expect(notebook.value(forKey: "entryCount") as? Int64 == 3)
                #expect(notebook.value(forKey: "totalWords") as? Int64 == 157)
                #expect(notebook.value(forKey: "searchTitle") as? String == "cafe notes")
                #expect(!context.hasChanges, "computing derived values leaves nothing unsaved")
                notebookURI = notebook.objectID.uriRepresentation()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let notebook = try Self.object(try #require(notebookURI), in: container, context)
            #expect(notebook.value(forKey: "entryCount") as? Int64 == 3)
            #expect(notebook.value(forKey: "totalWords") as? Int64 == 157)
            #expect(notebook.value(forKey: "searchTitle") as? String == "cafe notes")
            #expect(notebook.value(forKey: "lastModified") as? Date == savedAt)
            let entries = try #require(notebook.value(forKey: "entries") as? Set<ManagedObject>)
            for entry in entries {
                #expect(entry.value(forKey: "notebookTitle") as? String == "Café Notes")
                #expect(
                    entry.value(forKey: "upperTitle") as? String
                        == (entry.value(forKey: "title") as? String)?.uppercased())
            }
            // Stored values answer fetches like any attribute.
            let request = FetchRequest<ManagedObject>(entityName: "Notebook")
            request.predicate = try FetchPredicate(checkedFormat: "entryCount == 3 AND searchTitle BEGINSWITH 'cafe'")
            #expect(try context.fetch(request) == [notebook])
        }
        try container.close()
    }

    /// A change to a related object recomputes the derivations that read it, in objects the
    /// context had not loaded, and the result survives a reopen.
    @Test func changesOfRelatedObjectsRecomputeDependents() throws {
        let folder = TemporaryDirectory()
        var uris: (first: URL, second: URL)?
        do {
            let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let first = try Self.notebook("Travel", words: [10, 20], in: context)
                let second = try Self.notebook("Recipes", words: [5], in: context)
                try context.save()
                uris = (first.objectID.uriRepresentation(), second.objectID.uriRepresentation())
            }
            try container.close()
        }
        let (firstURI, secondURI) = try #require(uris)
        do {
            // A fresh context: only the notebooks are fetched; their entries are faults.
            let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let first = try Self.object(firstURI, in: container, context)
                let second = try Self.object(secondURI, in: container, context)
                #expect(first.hasFault(forRelationshipNamed: "entries"), "the entries are not loaded")
                first.setValue("Journeys", forKey: "title")
                try context.save()
                let renamed = try #require(first.value(forKey: "entries") as? Set<ManagedObject>)
                #expect(renamed.map { $0.value(forKey: "notebookTitle") as? String } == ["Journeys", "Journeys"])
                #expect(
                    renamed.allSatisfy {
                        $0.committedValues(forKeys: ["notebookTitle"])["notebookTitle"] as? String == "Journeys"
                    }, "saved")
                let moved = try #require(
                    (first.value(forKey: "entries") as? Set<ManagedObject>)?.first {
                        $0.value(forKey: "wordCount") as? Int32 == 20
                    })
                moved.setValue(second, forKey: "notebook")
                let gone = try #require((first.value(forKey: "entries") as? Set<ManagedObject>)?.first)
                context.delete(gone)
                try context.save()
                #expect(first.value(forKey: "entryCount") as? Int64 == 0)
                #expect(first.value(forKey: "totalWords") as? Int64 == 0)
                #expect(second.value(forKey: "entryCount") as? Int64 == 2)
                #expect(second.value(forKey: "totalWords") as? Int64 == 25)
                #expect(moved.value(forKey: "notebookTitle") as? String == "Recipes")
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let first = try Self.object(firstURI, in: container, context)
            let second = try Self.object(secondURI, in: container, context)
            #expect(first.value(forKey: "searchTitle") as? String == "journeys")
            #expect(first.value(forKey: "entryCount") as? Int64 == 0)
            #expect(second.value(forKey: "entryCount") as? Int64 == 2)
            let titles = (try #require(second.value(forKey: "entries") as? Set<ManagedObject>)).map {
                $0.value(forKey: "notebookTitle") as? String
            }
            #expect(titles == ["Recipes", "Recipes"])
            let request = FetchRequest<ManagedObject>(entityName: "Entry")
            request.predicate = try FetchPredicate(
                checkedFormat: "notebookTitle == 'Travel' OR notebookTitle == 'Journeys'")
            #expect(try context.count(for: request) == 0, "no entry keeps its old notebook's title")
        }
        try container.close()
    }

    /// Decimal sums and maxima, counts and copies through to-one relationships, in the
    /// Commerce model.
    @Test func orderTotalsFollowTheirLineItems() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: try RealWorldModelTests.model("Commerce"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let customer = EntityDescription.insertNewObject(forEntityName: "Customer", into: context)
            customer.setValue("Grace", forKey: "name")
            customer.setValue(UUID(), forKey: "identifier")
            let product = EntityDescription.insertNewObject(forEntityName: "Product", into: context)
            product.setValue("Lamp", forKey: "name")
            product.setValue("LMP-1", forKey: "sku")
            let order = EntityDescription.insertNewObject(forEntityName: "Order", into: context)
            order.setValue(Int64(1), forKey: "number")
            order.setValue(Date(), forKey: "placedAt")
            order.setValue(customer, forKey: "customer")
            var items: [ManagedObject] = []
            for amount in ["19.99", "0.01", "5.50"] {
                let item = EntityDescription.insertNewObject(forEntityName: "LineItem", into: context)
                item.setValue(Decimal(string: amount)!, forKey: "amount")
                item.setValue(product, forKey: "product")
                items.append(item)
            }
            order.setValue(items, forKey: "lineItems")
            try context.save()
            #expect(order.value(forKey: "total") as? Decimal == Decimal(string: "25.50"))
            #expect(order.value(forKey: "largestAmount") as? Decimal == Decimal(string: "19.99"))
            #expect(order.value(forKey: "itemCount") as? Int32 == 3)
            #expect(order.value(forKey: "customerName") as? String == "Grace")
            #expect(items.map { $0.value(forKey: "productName") as? String } == ["Lamp", "Lamp", "Lamp"])

            product.setValue("Desk lamp", forKey: "name")
            context.delete(items[0])
            try context.save()
            #expect(order.value(forKey: "total") as? Decimal == Decimal(string: "5.51"))
            #expect(order.value(forKey: "largestAmount") as? Decimal == Decimal(string: "5.50"))
            #expect(order.value(forKey: "itemCount") as? Int32 == 2)
            #expect(items.dropFirst().map { $0.value(forKey: "productName") as? String } == ["Desk lamp", "Desk lamp"])

            context.reset()
            let request = FetchRequest<ManagedObject>(entityName: "Order")
            request.predicate = try FetchPredicate(
                checkedFormat: "total == %@ AND customerName == 'Grace'", argumentArray: [Decimal(string: "5.51")!])
            #expect(try context.count(for: request) == 1, "the stored derived values answer fetches")
        }
        try container.close()
    }

    @Test func derivedAttributesAreReadOnly() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: try Self.journal())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let notebook = try Self.notebook("Read only", words: [1], in: context)
            let error = #expect(throws: CoreDataError.self) {
                try notebook.setValue(Int64(99), forCheckedKey: "entryCount")
            }
            #expect(error?.code == .keyValueValidation)
            #expect(error?.message.contains("entryCount") == true)
            try context.save()
            #expect(notebook.value(forKey: "entryCount") as? Int64 == 1)
        }
        try container.close()
    }

    @Test(arguments: [
        ("title.length", "title is an attribute"),
        ("FUNCTION(title, 'reverse')", "does not read"),
        ("entries.title", "must be followed by @count"),
        ("random()", "supported are"),
    ])
    func unsupportedExpressionsAreRefusedAtLoad(_ expression: String, _ reason: String) throws {
        let folder = TemporaryDirectory()
        let url = try ModelFileFixture.write(
            """
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="summary" optional="YES" attributeType="String" derived="YES" derivationExpression="\(expression)"/>
                <relationship name="entries" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Folder"/>
            </entity>
            """, in: folder)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: url) }
        #expect(error?.code == .invalidModel)
        #expect(error?.entityName == "Folder")
        #expect(error?.propertyName == "summary")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(expression.prefix(5)) == true, "the message names the expression")
    }

    @Test func aDerivationMustFitItsAttributeType() throws {
        let folder = TemporaryDirectory()
        let url = try ModelFileFixture.write(
            """
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <attribute name="stamp" optional="YES" attributeType="String" derived="YES" derivationExpression="now()"/>
            </entity>
            """, in: folder)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: url) }
        #expect(error?.code == .invalidModel)
        #expect(error?.message.contains("Folder.stamp") == true)
        #expect(error?.message.contains("Date") == true)
    }

    /// A model built in code: `NSDerivedAttributeDescription` with an expression made of
    /// `NSExpression(forFunction:arguments:)`.
    @Test func derivedAttributesBuiltInCode() throws {
        let name = ModelBuilder.attribute("name", .string)
        let slug = DerivedAttributeDescription()
        slug.name = "slug"
        slug.type = .string
        slug.derivationExpression = FetchExpression(
            forFunction: "lowercase:", arguments: [FetchExpression(forKeyPath: "name")])
        let model = ModelBuilder.model([ModelBuilder.entity("Page", [name, slug])])
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let page = EntityDescription.insertNewObject(forEntityName: "Page", into: context)
            page.setValue("Hello World", forKey: "name")
            try context.save()
            #expect(page.value(forKey: "slug") as? String == "hello world")
            page.setValue("Second", forKey: "name")
            try context.save()
            #expect(page.value(forKey: "slug") as? String == "second")
        }
        try container.close()

        let broken = DerivedAttributeDescription()
        broken.name = "broken"
        broken.type = .integer64
        broken.derivationExpression = FetchExpression(
            forFunction: "lowercase:", arguments: [FetchExpression(forKeyPath: "name")])
        let bad = ModelBuilder.model([ModelBuilder.entity("Page", [ModelBuilder.attribute("name", .string), broken])])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: bad)
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(type: .strata, configuration: nil, at: folder.store("Bad"))
        }
        #expect(error?.message.contains("Page.broken") == true, "\(error?.message ?? "")")
    }
}
