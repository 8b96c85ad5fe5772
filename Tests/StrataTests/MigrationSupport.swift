import Foundation
@testable import Strata

/// The versions of the `Shop` model (Tests/StrataTests/Models/Shop.xcdatamodeld) and a store of
/// its first version, for the migration tests.
enum ShopModels {
    /// The version bundle.
    static var bundle: URL {
        Bundle.module.url(forResource: "Shop", withExtension: "xcdatamodeld", subdirectory: "Models")!
    }

    /// The version named `name` (`Shop`, `Shop 2`, `Shop 3`).
    static func version(_ name: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(checkedContentsOf: bundle.appendingPathComponent("\(name).xcdatamodel"))
    }

    /// The options that ask `addPersistentStore(ofType:…)` for an inferred migration.
    static var migrating: [String: Any] {
        [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true]
    }

    /// The customers the first version's store holds.
    static let customerCount = 20

    /// Customer `i`'s e-mail address (every other customer has one).
    static func email(_ i: Int) -> String? { i.isMultiple(of: 2) ? "c\(i)@example.com" : nil }

    /// Writes a store of the first version at `url`: 20 customers with 0–2 orders each and one
    /// of three tags; closes it.
    static func fillVersion1(at url: URL) throws {
        let container = try GraphModel.container(at: url, model: version("Shop"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let tags = (0..<3).map { i in
                let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                tag.setValue("tag\(i)", forKey: "label")
                return tag
            }
            for i in 0..<customerCount {
                let customer = EntityDescription.insertNewObject(forEntityName: "Customer", into: context)
                customer.setValue("Customer \(i)", forKey: "name")
                customer.setValue(email(i), forKey: "email")
                customer.setValue(Int16(20 + i), forKey: "age")
                customer.setValue(Set([tags[i % 3]]), forKey: "tags")
                for n in 0..<(i % 3) {
                    let order = EntityDescription.insertNewObject(forEntityName: "Order", into: context)
                    order.setValue(Int32(i * 10 + n), forKey: "number")
                    order.setValue(Double(i) + 0.5, forKey: "total")
                    order.setValue(n == 0, forKey: "paid")
                    order.setValue(customer, forKey: "customer")
                }
            }
            try context.save()
        }
        try container.close()
    }

    /// The customers of a store, by name.
    static func customers(in context: ManagedObjectContext) throws -> [String: ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "Customer")
        return Dictionary(
            uniqueKeysWithValues: try context.fetch(request).map { ($0.value(forKey: "name") as! String, $0) })
    }

    /// The related objects of a to-many relationship.
    static func related(_ object: ManagedObject, _ key: String) -> [ManagedObject] {
        (object.value(forKey: key) as? Set<ManagedObject>).map(Array.init) ?? []
    }

    /// The names of the segment files of the store at `url`, with their sizes.
    static func segmentFiles(_ url: URL) throws -> [String: Int] {
        let directory = url.appendingPathComponent("segments")
        var files: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] =
                (try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size]
                    as? Int) ?? -1
        }
        return files
    }
}
