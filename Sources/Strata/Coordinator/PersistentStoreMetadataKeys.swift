// The keys of a store's metadata (Core Data's `NSStoreTypeKey`, … with `NS` dropped and Core
// Data's string values); see ``PersistentStoreCoordinator/metadataForPersistentStore(ofType:at:options:)``.

/// `String`: the store's type (``SQLiteStoreType`` for a Strata store directory).
public let StoreTypeKey = "NSStoreType"
// ``StoreUUIDKey`` (`String`: the store's UUID) is declared with the remote change notification.
/// `[String: Data]`: the version hash of every entity of the model the store was written with.
public let StoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// `[String]`: the version identifiers of the model the store was written with.
public let StoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// `String`: the ``ManagedObjectModel/versionChecksum`` of the model the store was written with.
public let StoreModelVersionChecksumKey = "NSStoreModelVersionChecksumKey"
/// `Int`: the version of the hashing scheme of ``StoreModelVersionHashesKey``.
public let StoreModelVersionHashesVersionKey = "NSStoreModelVersionHashesVersion"
/// `Double`: the version of the framework that wrote the metadata.
public let PersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"
