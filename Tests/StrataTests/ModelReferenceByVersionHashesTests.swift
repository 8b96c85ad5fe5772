import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// ``ManagedObjectModelReference/init(entityVersionHashes:in:versionChecksum:)``: the model of a
/// bundle whose entities have the version hashes given (as a store's metadata holds them), found
/// among every model and every version of a versioned model.
@Suite struct ModelReferenceByVersionHashesTests {
    @Test func theVersionWithTheHashesIsFound() throws {
        for name in ["Shop", "Shop 2", "Shop 3"] {
            let version = try ShopModels.version(name)
            let reference = ManagedObjectModelReference(
                entityVersionHashes: version.entityVersionHashesByName, in: Bundle.module,
                versionChecksum: version.versionChecksum)
            #expect(reference.problem == nil, "\(name)")
            #expect(reference.resolvedModel.entityVersionHashesByName == version.entityVersionHashesByName, "\(name)")
            #expect(reference.resolvedModel.versionChecksum == version.versionChecksum, "\(name)")
        }
    }

    /// The hashes a store's metadata holds name the model it was written with, and a stage from that
    /// reference migrates the store; hashes no model has fail the migration and keep the store.
    @Test func aStoresMetadataNamesItsModel() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let v1 = try ShopModels.version("Shop"), v2 = try ShopModels.version("Shop 2")
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        let stored = try #require(metadata[StoreModelVersionHashesKey] as? [String: Any])
        let source = ManagedObjectModelReference(
            entityVersionHashes: Dictionary(uniqueKeysWithValues: stored.map { (AnyHashable($0.key), $0.value) }),
            in: Bundle.module, versionChecksum: v1.versionChecksum)
        #expect(source.resolvedModel.versionChecksum == v1.versionChecksum)
        #expect(source.resolvedModel.entitiesByName["Customer"] != nil)

        var unknown = v1.entityVersionHashesByName
        unknown["Customer"] = Data(repeating: 7, count: 32)
        let missing = ManagedObjectModelReference(
            entityVersionHashes: unknown, in: Bundle.module, versionChecksum: v1.versionChecksum)
        #expect(missing.problem?.code == .migrationMissingSourceModel)
        #expect(missing.resolvedModel.entities.isEmpty)
        let failing = CustomMigrationStage(
            migratingFrom: missing, to: ManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        let error = try #require(throws: CoreDataError.self) {
            try StagedMigrationManagerTests.open(url, model: v2, manager: StagedMigrationManager([failing]))
        }
        #expect(error.code == .migrationMissingSourceModel)
        #expect(
            v1.isConfiguration(
                withName: nil,
                compatibleWithStoreMetadata: try PersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: SQLiteStoreType, at: url)))

        let stage = CustomMigrationStage(
            migratingFrom: source, to: ManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        _ = try StagedMigrationManagerTests.open(url, model: v2, manager: StagedMigrationManager([stage]))
        #expect(
            v2.isConfiguration(
                withName: nil,
                compatibleWithStoreMetadata: try PersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: SQLiteStoreType, at: url)))
    }
}
