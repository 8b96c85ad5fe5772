import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A reading whose accessors log each `willAccessValue(forKey:)` and `didAccessValue(forKey:)`.
final class LoggedReading: ManagedObject {
    @Managed var title: String
    @Managed var count: Int64
    @Managed var flag: Bool
    @Managed var ratio: Double
    @Managed var stamp: Date
    @Managed var small: Int16
    @Managed var note: String?

    /// The calls, in order: `will title`, `did title`, ...
    var accesses: [String] = []

    override func willAccessValue(forKey key: String?) { accesses.append("will \(key ?? "-")") }
    override func didAccessValue(forKey key: String?) { accesses.append("did \(key ?? "-")") }
}

/// `@Managed` properties of an object loaded from a store read each attribute straight from the
/// row it was loaded from, typed without going through `Any` (a string, a 64-bit integer, a
/// Boolean, a double, a date): the values are those saved, the access hooks run around each read
/// as Core Data's accessors call them, and a change made since, also in the hooks, is what a read
/// returns.
@Suite struct LazyTypedReadTests {
    static let stamp = Date(timeIntervalSinceReferenceDate: 123_456.5)

    /// A container whose store at `folder` holds one reading ("first", 1 << 40, true, 0.25,
    /// ``stamp``, -7, no note) and one hooked reading titled "saved".
    static func container(_ folder: TemporaryDirectory) throws -> PersistentContainer {
        let entity = ModelBuilder.entity(
            "Reading",
            [
                ModelBuilder.attribute("title", .string, isOptional: false),
                ModelBuilder.attribute("count", .integer64, isOptional: false),
                ModelBuilder.attribute("flag", .boolean, isOptional: false),
                ModelBuilder.attribute("ratio", .double, isOptional: false),
                ModelBuilder.attribute("stamp", .date, isOptional: false),
                ModelBuilder.attribute("small", .integer16, isOptional: false),
                ModelBuilder.attribute("note", .string),
            ], className: "LoggedReading")
        let hooked = ModelBuilder.entity(
            "Hooked", [ModelBuilder.attribute("title", .string, isOptional: false)], className: "HookedReading")
        LoggedReading.register(for: "Reading")
        HookedReading.register(for: "Hooked")
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity, hooked]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let reading = LoggedReading(context: context)
            (reading.title, reading.count, reading.flag, reading.ratio) = ("first", 1 << 40, true, 0.25)
            (reading.stamp, reading.small) = (stamp, -7)
            HookedReading(context: context).title = "saved"
            try context.save()
        }
        return container
    }

    @Test func fetchedObjectsReadTheSavedValuesBetweenTheAccessHooks() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let reading = try #require(try context.fetch(FetchRequest<LoggedReading>(entityName: "Reading")).first)
            #expect(reading.lazyRow != nil, "a fetched object holds its row undecoded")
            #expect(reading.title == "first")
            #expect(reading.count == 1 << 40)
            #expect(reading.flag)
            #expect(reading.ratio == 0.25)
            #expect(reading.stamp == Self.stamp)
            #expect(reading.small == -7)
            #expect(reading.note == nil)
            let keys = ["title", "count", "flag", "ratio", "stamp", "small", "note"]
            #expect(reading.accesses == keys.flatMap { ["will \($0)", "did \($0)"] })
            #expect(!reading.hasChanges && reading.lazyRow != nil, "reading decodes nothing into the object")
        }
    }

    /// A fault's first `@Managed` read fires it between the hooks and reads the row it loaded,
    /// as a fetched object's read does; a hook that sets the value first is still what it reads.
    @Test func aFaultsFirstReadFiresItAndReadsItsRow() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(folder)
        let writer = container.newBackgroundContext()
        let (readingID, hookedID) = try writer.performAndWait {
            (
                try #require(try writer.fetch(FetchRequest<LoggedReading>(entityName: "Reading")).first).objectID,
                try #require(try writer.fetch(FetchRequest<HookedReading>(entityName: "Hooked")).first).objectID
            )
        }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let reading = try #require(context.object(with: readingID) as? LoggedReading)
            #expect(reading.isFault)
            #expect(reading.count == 1 << 40)
            #expect(
                !reading.isFault && reading.lazyRow != nil,
                "the read fired the fault and decoded nothing into the object")
            #expect(reading.title == "first")
            #expect(reading.accesses == ["will count", "did count", "will title", "did title"])
            let hooked = try #require(context.object(with: hookedID) as? HookedReading)
            #expect(hooked.isFault)
            #expect(hooked.title == "set in the hook")
        }
    }

    @Test func aReadReturnsTheChangeMadeSinceTheLoadAndInTheHooks() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(folder)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let reading = try #require(try context.fetch(FetchRequest<LoggedReading>(entityName: "Reading")).first)
            reading.count = 5
            #expect(reading.count == 5)
            #expect(reading.title == "first")
            #expect(reading.changedValues()["count"] as? Int64 == 5)
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            let reading = try #require(try other.fetch(FetchRequest<HookedReading>(entityName: "Hooked")).first)
            #expect(
                reading.title == "set in the hook", "a hook that changes the value before the read: the read sees it")
        }
    }
}

/// A reading whose `willAccessValue(forKey:)` sets the title the first time it is read.
final class HookedReading: ManagedObject {
    @Managed var title: String
    private var hooked = false

    override func willAccessValue(forKey key: String?) {
        guard key == "title", !hooked else { return }
        hooked = true
        setPrimitiveValue("set in the hook", forKey: "title")
    }
}
