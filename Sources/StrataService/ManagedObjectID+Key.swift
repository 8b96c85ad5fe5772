import Foundation
import Strata

extension ManagedObjectID {
    /// The integer the API names the object by: the primary key that ends its URI
    /// (`x-coredata://<store>/<Entity>/p<key>`); 0 for a temporary ID.
    var key: Int64 {
        let last = uriRepresentation().lastPathComponent
        guard last.first == "p" else { return 0 }
        return Int64(last.dropFirst()) ?? 0
    }
}

extension PersistentStoreCoordinator {
    /// The ID of the `entity` object the API names `key` in `store`, or `nil` when `key` cannot be one.
    func objectID(entity: String, key: Int64, in store: PersistentStore) -> ManagedObjectID? {
        guard key > 0 else { return nil }
        return managedObjectID(
            forURIRepresentation: URL(string: "x-coredata://\(store.identifier)/\(entity)/p\(key)")!)
    }
}
