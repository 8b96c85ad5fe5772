import Foundation
import Logging
import Strata

extension MirrorState {
    /// The attribute holding the leased key ranges, which builds before leased keys lacked.
    static func keysAttribute() -> AttributeDescription {
        let keys = AttributeDescription(name: "keys", type: .binaryData)
        keys.isOptional = true
        return keys
    }

    /// Upgrades the mirror's own entity in the store at `url` when an older build wrote it
    /// (`StrataMirrorState` without `keys`), whatever the description says about automatic
    /// migration: the store is migrated from the model it was written with to that model with
    /// the entity upgraded (adding an optional attribute: in place, every row, ID and history
    /// kept), so that opening it then depends only on the application's own entities. Does
    /// nothing for a store that does not exist, predates Strata's model archive or is current.
    ///
    /// - Returns: whether the store was upgraded.
    /// - Throws: ``CoreDataError`` when the store cannot be read or migrated.
    @discardableResult
    static func upgradeStore(at url: URL, logger: Logger) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path),
            let upgraded = try ManagedObjectModel.storeModel(at: url),
            let entity = upgraded.entitiesByName[entityName], entity.propertiesByName[keysAttribute().name] == nil
        else { return false }
        entity.properties.append(keysAttribute())
        let coordinator = PersistentStoreCoordinator(managedObjectModel: upgraded)
        let store = try coordinator.addPersistentStore(
            type: .strata, at: url,
            options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true])
        try coordinator.remove(store)
        logger.notice("upgraded the store's mirror state to hold leased keys", metadata: ["store": "\(url.path)"])
        return true
    }
}
