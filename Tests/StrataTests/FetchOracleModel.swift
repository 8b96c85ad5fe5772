import Foundation
import StrataTestSupport
@testable import Strata

/// The oracle's model: `Item` with an attribute of every comparable type (all optional) and a
/// to-one `owner`; `Owner` with `name`, `rank` and the inverse to-many `items`. The indexed
/// variant declares fetch indexes on most `Item` attributes, so the same fetch runs once through
/// the query planner's index paths and once through scans.
enum FetchOracleModel {
    /// The `Item` attributes and their types, in model order.
    static let itemAttributes: [(name: String, type: AttributeDescription.AttributeType)] = [
        ("i16", .integer16), ("i32", .integer32), ("i64", .integer64), ("dbl", .double), ("flt", .float),
        ("dec", .decimal), ("flag", .boolean), ("text", .string), ("day", .date), ("uid", .uuid), ("blob", .binaryData),
        ("link", .uri),
    ]

    /// The attributes whose values have an order (sort keys, ordering comparisons).
    static let orderedAttributes = itemAttributes.map(\.name).filter { $0 != "blob" && $0 != "link" }

    /// The attributes the indexed variant declares fetch indexes on.
    static let indexedAttributes: Set<String> = ["i16", "i64", "dbl", "flag", "text", "day", "uid", "link", "serial"]

    /// A model, with or without fetch indexes on `Item`.
    static func make(indexed: Bool) -> ManagedObjectModel {
        let item = ModelBuilder.entity("Item")
        let serial = ModelBuilder.attribute("serial", .integer64, isOptional: false, defaultValue: Int64(0))
        item.properties = [serial] + itemAttributes.map { ModelBuilder.attribute($0.name, $0.type) }
        let owner = ModelBuilder.entity(
            "Owner",
            [
                ModelBuilder.attribute("serial", .integer64, isOptional: false, defaultValue: Int64(0)),
                ModelBuilder.attribute("name", .string), ModelBuilder.attribute("rank", .integer32),
            ])
        let toOwner = ModelBuilder.relationship("owner", from: item, to: owner)
        let items = ModelBuilder.relationship("items", from: owner, to: item, toMany: true)
        ModelBuilder.inverse(toOwner, items)
        if indexed {
            item.indexes = item.properties.compactMap { property in
                guard let attribute = property as? AttributeDescription, indexedAttributes.contains(attribute.name)
                else { return nil }
                return FetchIndexDescription(
                    name: "by_\(attribute.name)",
                    elements: [FetchIndexElementDescription(property: attribute, collationType: .binary)])
            }
        }
        return ModelBuilder.model([item, owner])
    }
}

/// One `Item` as the oracle sees it: its attribute values by name (absent = `nil`) and its owner.
struct OracleItem {
    var serial: Int64
    var values: [String: Any] = [:]
    var owner: Int?
}

/// One `Owner` as the oracle sees it.
struct OracleOwner {
    var serial: Int64
    var name: String?
    var rank: Int32?
}

/// A random dataset: owners, items with random values (about one in five `nil`) drawn from
/// small domains so equality and ordering comparisons hit.
struct OracleDataset {
    var items: [OracleItem] = []
    var owners: [OracleOwner] = []

    /// The strings the `text` attribute and string comparisons draw from: mixed case, accents,
    /// wildcard and regular-expression characters, the empty string.
    static let strings = [
        "alpha", "Alpha", "ALPHA", "beta", "café", "Cafe", "CAFÉ", "école", "Ecole", "naïve", "naive", "a*b", "a?c",
        "x.y", "", "zeta", "Zürich", "zurich", "abc", "abcd", "b",
    ]
    static let owners = ["north", "South", "east", "Wëst", "centre"]
    static let doubles: [Double] = [-1.5, 0, 0.25, 2.5, 1000, 3.75, 42]
    static let floats: [Float] = [-2, 0.5, 1.5, 42]
    static let decimals: [Decimal] = [Decimal(string: "1.1")!, Decimal(string: "2.25")!, -3, 42]
    static let uuids = (0..<5).map { UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", $0 * 7919))! }
    static let days = (0..<12).map { Date(timeIntervalSinceReferenceDate: Double($0) * 86_400 * 3.5) }
    static let blobs = [Data(), Data([0]), Data([1, 2, 3]), Data("strata".utf8)]
    static let links = ["https://example.com/a", "https://example.com/b", "file:///tmp/x"].map { URL(string: $0)! }

    /// A random value for the attribute `name`.
    static func value(_ name: String, _ random: inout SplitMix64) -> Any {
        switch name {
        case "i16": return Int16.random(in: -5...5, using: &random)
        case "i32": return Int32.random(in: -100...100, using: &random) * 3
        case "i64": return Int64.random(in: 0...1000, using: &random)
        case "dbl": return doubles.randomElement(using: &random)!
        case "flt": return floats.randomElement(using: &random)!
        case "dec": return decimals.randomElement(using: &random)!
        case "flag": return Bool.random(using: &random)
        case "text": return strings.randomElement(using: &random)!
        case "day": return days.randomElement(using: &random)!
        case "uid": return uuids.randomElement(using: &random)!
        case "blob": return blobs.randomElement(using: &random)!
        case "link": return links.randomElement(using: &random)!
        default: preconditionFailure("no attribute \(name)")
        }
    }

    /// Random attribute values for one item, about one in five left `nil`.
    static func randomValues(_ random: inout SplitMix64) -> [String: Any] {
        var values: [String: Any] = [:]
        for (name, _) in FetchOracleModel.itemAttributes where Int.random(in: 0..<5, using: &random) > 0 {
            values[name] = value(name, &random)
        }
        return values
    }

    /// A dataset of `count` items and a handful of owners.
    init(count: Int, random: inout SplitMix64) {
        for (index, name) in Self.owners.enumerated() {
            owners.append(OracleOwner(serial: Int64(index + 1), name: index == 4 ? nil : name, rank: Int32(index % 3)))
        }
        for serial in 1...count {
            let owner = Int.random(in: 0...owners.count, using: &random)
            items.append(
                OracleItem(
                    serial: Int64(serial), values: Self.randomValues(&random),
                    owner: owner == owners.count ? nil : owner))
        }
    }

    /// The items of the owner at `index`.
    func items(of index: Int) -> [OracleItem] { items.filter { $0.owner == index } }
}
