import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A container subclass that keeps its stores in a folder of its own, as apps do.
/// (Swift 6 asks a subclass of a `Sendable` class to restate the conformance.)
class AppContainer: PersistentContainer, @unchecked Sendable {
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "strata-app-container-\(ProcessInfo.processInfo.processIdentifier)")

    override class func defaultDirectoryURL() -> URL { folder }
}

/// `PersistentContainer(name:)` finds its model by name, and a subclass moves the default store.
@Suite struct PersistentContainerModelLookupTests {
    @Test func findsTheNamedModelInTheGivenBundle() throws {
        let container = try PersistentContainer(name: "Company", bundle: Bundle.module)
        #expect(container.name == "Company")
        #expect(
            container.managedObjectModel.entitiesByName["Manager"] != nil, "the current version of Company.xcdatamodeld"
        )
        let library = try PersistentContainer(name: "Library", bundle: Bundle.module)
        #expect(library.managedObjectModel.entitiesByName.keys.sorted() == ["Author", "Book", "Tag"])
    }

    /// `ManagedObjectModel.mergedModel(from:)` merges every model of the bundles, and refuses
    /// two entities of one name, as Core Data's does.
    @Test func mergedModelFromBundles() throws {
        let folder = TemporaryDirectory()
        _ = try ModelQuirkTests.write(
            #"<entity name="Author" representedClassName="Author"><attribute name="name" optional="YES" attributeType="String"/></entity>"#,
            in: folder, name: "People")
        _ = try ModelQuirkTests.write(
            #"<entity name="Book" representedClassName="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#,
            in: folder, name: "Books")
        let bundle = try #require(Bundle(url: folder.url))
        let merged = try #require(ManagedObjectModel.mergedModel(from: [bundle]))
        #expect(merged.entitiesByName.keys.sorted() == ["Author", "Book"])
        #expect(merged.entities.allSatisfy { $0.managedObjectModel === merged })
        let container = PersistentContainer(name: "Merged", managedObjectModel: merged)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.store("Merged"))]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        try container.close()

        _ = try ModelQuirkTests.write(#"<entity name="Book" representedClassName="Book"/>"#, in: folder, name: "Again")
        #expect(ManagedObjectModel.mergedModel(from: [bundle]) == nil, "two entities named Book")
    }

    @Test func missingModelInTheGivenBundleIsATypedError() {
        let error = #expect(throws: ModelError.self) {
            _ = try PersistentContainer(name: "NoSuchModel", bundle: Bundle.module)
        }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("NoSuchModel") == true)
    }

    /// Core Data's `init(name:)` looks in the main bundle and the package's resource bundles.
    @Test func initWithNameFindsPackageResources() {
        let container = PersistentContainer(name: "Library")
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Author", "Book", "Tag"])
    }

    /// As in Core Data, a missing model is logged and the container gets an empty model.
    @Test func initWithNameOfAMissingModelGivesAnEmptyModel() {
        let container = PersistentContainer(name: "NoSuchModel")
        #expect(container.managedObjectModel.entities.isEmpty)
        #expect(container.persistentStoreDescriptions.first?.url?.lastPathComponent == "NoSuchModel.strata")
    }

    /// `override class func defaultDirectoryURL()` moves the container's default store, which
    /// then saves and reopens there.
    @Test func subclassOverridesTheDefaultDirectory() throws {
        defer { try? FileManager.default.removeItem(at: AppContainer.folder) }
        let name = "App-\(UUID().uuidString)"
        let expected = AppContainer.folder.appendingPathComponent("\(name).strata")
        do {
            let container = AppContainer(name: name, managedObjectModel: GraphModel.make())
            #expect(container.persistentStoreDescriptions.map(\.url) == [expected])
            try PersistentStoreDescriptionTests.load(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                Department(context: context).name = "Research"
                try context.save()
            }
            try container.close()
        }
        #expect(FileManager.default.fileExists(atPath: expected.path))
        let reopened = AppContainer(name: name, managedObjectModel: GraphModel.make())
        try PersistentStoreDescriptionTests.load(reopened)
        let context = reopened.newBackgroundContext()
        try context.performAndWait {
            let names = try context.fetch(Department.fetchRequest()).map(\.name)
            #expect(names == ["Research"])
        }
        try reopened.close()
    }
}
