import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The property lists a store holds (its metadata, composite and transformable values) read by
/// the project's binary reader: the same values as Foundation's, and a damaged file a typed
/// error that loses nothing.
@Suite struct PropertyListReadingTests {
    /// A property list of every kind of value, as a program's metadata or a transformable value.
    static var sample: [String: Any] {
        [
            "integer": 3, "negative": -70_000_000_000, "real": 1.5, "yes": true, "no": false, "text": "Grüße",
            "data": Data([1, 2, 3]), "date": Date(timeIntervalSinceReferenceDate: 812_345_678.25),
            "list": [1, 2, 3], "names": ["a", "b"], "hashes": ["Customer": Data([9, 9]), "Order": Data()],
            "nested": ["inner": ["depth": 2]],
        ]
    }

    /// The keys both readers must agree on, each read as a program would cast it.
    static func readings(_ plist: Any) -> [String] {
        let values = plist as? [String: Any] ?? [:]
        return [
            "\(values["integer"] as? Int as Any) \(values["integer"] as? Int64 as Any) \(values["integer"] as? Double as Any)",
            "\(values["negative"] as? Int64 as Any)",
            "\(values["real"] as? Double as Any) \(values["real"] as? Float as Any)",
            "\(values["yes"] as? Bool as Any) \(values["no"] as? Bool as Any)",
            "\(values["text"] as? String as Any)",
            "\(values["data"] as? Data as Any)",
            "\(values["date"] as? Date as Any)",
            "\(values["list"] as? [Int] as Any) \(values["names"] as? [String] as Any)",
            "\((values["hashes"] as? [String: Data])?.sorted { $0.key < $1.key } as Any)",
            "\(((values["nested"] as? [String: Any])?["inner"] as? [String: Any])?["depth"] as? Int as Any)",
        ]
    }

    @Test("a binary property list reads as Foundation reads it")
    func matchesFoundation() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: Self.sample, format: .binary, options: 0)
        let ours = try PropertyListReading.object(from: data)
        let foundation = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        #expect(Self.readings(ours) == Self.readings(foundation))
        #expect(Self.readings(ours)[0] == "Optional(3) Optional(3) Optional(3.0)")
        #expect(Self.readings(ours)[3] == "Optional(true) Optional(false)")
        // An XML property list goes to Foundation.
        let xml = try PropertyListSerialization.data(fromPropertyList: Self.sample, format: .xml, options: 0)
        let fromXML = try PropertyListReading.object(from: xml)
        #expect(Self.readings(fromXML) == Self.readings(foundation))
    }

    @Test("the default transformer reads what it wrote and throws on a damaged list")
    func transformerRoundTrip() throws {
        let transformer = PropertyListValueTransformer()
        let data = try transformer.transformedValue(["a": 1, "b": 2])
        #expect(try transformer.reverseTransformedValue(data) as? [String: Int] == ["a": 1, "b": 2])
        var damaged = data
        damaged[damaged.count - 1] = 0xFF  // the offset table's start, past the data
        #expect(throws: ModelError.self) { _ = try transformer.reverseTransformedValue(damaged) }
    }

    @Test("damaged store metadata is a typed error, and the store opens again once it is repaired")
    func damagedMetadata() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let file = url.appendingPathComponent(StoreMetadataFile.fileName)
        let original = try Data(contentsOf: file)
        #expect(original.starts(with: Array("bplist00".utf8)))
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(metadata[StoreModelVersionIdentifiersKey] as? [String] == ["1"])
        #expect(
            (metadata[StoreModelVersionHashesKey] as? [String: Data])?.keys.sorted() == ["Customer", "Order", "Tag"])

        // Every object's offset points past the objects: none is where the table says.
        var damaged = original
        let trailer = damaged.count - 32
        let table = damaged[(trailer + 24)..<trailer + 32].reduce(0) { $0 << 8 | Int($1) }
        damaged.replaceSubrange(table..<trailer, with: repeatElement(0xFF, count: trailer - table))
        try damaged.write(to: file)
        let error = #expect(throws: CoreDataError.self) {
            try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        }
        #expect(error?.code == .persistentStoreOpen)
        let opening = #expect(throws: CoreDataError.self) {
            try GraphModel.container(at: url, model: ShopModels.version("Shop"))
        }
        #expect(opening?.code == .persistentStoreOpen)

        try original.write(to: file)
        let container = try GraphModel.container(at: url, model: ShopModels.version("Shop"))
        let context = container.newBackgroundContext()
        let customers = try context.performAndWait { try ShopModels.customers(in: context).count }
        #expect(customers == ShopModels.customerCount)
        try container.close()
    }
}
