import Foundation

/// A model version a ``CustomMigrationStage`` migrates from or to (Core Data's
/// `NSManagedObjectModelReference`): a model and the checksum it is expected to have.
public final class ManagedObjectModelReference {
    /// The checksum the reference was made with (``ManagedObjectModel/versionChecksum``).
    public let versionChecksum: String
    /// The model; an empty model when a file could not be loaded (the migration then fails
    /// with the load error).
    public let resolvedModel: ManagedObjectModel
    /// Why the model could not be loaded, or why it does not match ``versionChecksum``.
    let problem: CoreDataError?

    /// A reference to `model`, which should have the checksum `versionChecksum`.
    public init(model: ManagedObjectModel, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        resolvedModel = model
        problem = Self.check(model, versionChecksum)
    }

    /// A reference to the model at `fileURL` (an `.xcdatamodel` directory or its `contents`
    /// file), which should have the checksum `versionChecksum`. A file that does not load makes
    /// the migration fail with `migrationMissingSourceModel`.
    public init(fileURL: URL, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        do {
            let model = try ManagedObjectModel(checkedContentsOf: fileURL)
            resolvedModel = model
            problem = Self.check(model, versionChecksum)
        } catch {
            resolvedModel = ManagedObjectModel()
            problem = CoreDataError(
                .migrationMissingSourceModel,
                "the model of a migration stage at \(fileURL.path) does not load: \(error)", underlyingError: error)
        }
    }

    /// A reference to the version with the checksum `versionChecksum` of the model named
    /// `modelName` in `bundle` (the main bundle and the package resource bundles beside the
    /// executable when `nil`), looked up as ``PersistentContainer/init(name:)`` looks up its
    /// model: of an `.xcdatamodeld`, the version with that checksum. A model that is not found
    /// makes the migration fail with `migrationMissingSourceModel`.
    public convenience init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        let bundles = bundle.map { [$0] } ?? [Bundle.main] + PersistentContainer.packageResourceBundles()
        guard let url = bundles.lazy.compactMap({ PersistentContainer.modelURL(named: modelName, in: $0) }).first else {
            self.init(
                missing: "no model named \(modelName) in \(bundles.map(\.bundlePath).joined(separator: ", "))",
                versionChecksum: versionChecksum)
            return
        }
        guard url.pathExtension == "xcdatamodeld" else {
            self.init(fileURL: url, versionChecksum: versionChecksum)
            return
        }
        let versions = (try? ManagedObjectModel.versions(in: url)) ?? []
        let model = versions.lazy.compactMap { try? ManagedObjectModel(checkedContentsOf: $0) }.first {
            $0.versionChecksum == versionChecksum
        }
        if let model {
            self.init(model: model, versionChecksum: versionChecksum)
        } else {
            self.init(
                missing: "no version of \(url.path) has the checksum \(versionChecksum)",
                versionChecksum: versionChecksum)
        }
    }

    /// A reference to the model in `bundle` (the main bundle and the package resource bundles
    /// beside the executable when `nil`) whose entities have exactly the version hashes
    /// `versionHash` (entity name to ``EntityDescription/versionHash``, as
    /// ``ManagedObjectModel/entityVersionHashesByName`` and a store's
    /// ``StoreModelVersionHashesKey`` metadata give them), which should have the checksum
    /// `versionChecksum`. Every model of the bundle is looked at, each version of a versioned
    /// model on its own. A model that is not found makes the migration fail with
    /// `migrationMissingSourceModel`.
    public convenience init(
        entityVersionHashes versionHash: [AnyHashable: Any], in bundle: Bundle?, versionChecksum: String
    ) {
        var wanted: [String: Data] = [:]
        for (name, hash) in versionHash {
            guard let name = name.base as? String, let hash = hash as? Data else { continue }
            wanted[name] = hash
        }
        let bundles = bundle.map { [$0] } ?? [Bundle.main] + PersistentContainer.packageResourceBundles()
        let model = bundles.lazy.flatMap(PersistentContainer.modelURLs(in:))
            .compactMap { try? ManagedObjectModel(checkedContentsOf: $0) }
            .first { !wanted.isEmpty && wanted.count == versionHash.count && $0.entityVersionHashesByName == wanted }
        if let model {
            self.init(model: model, versionChecksum: versionChecksum)
        } else {
            self.init(
                missing:
                    "no model in \(bundles.map(\.bundlePath).joined(separator: ", ")) has the \(versionHash.count) entity version hashes given",
                versionChecksum: versionChecksum)
        }
    }

    /// A reference to no model, whose migration fails with `migrationMissingSourceModel` and `message`.
    private init(missing message: String, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        resolvedModel = ManagedObjectModel()
        problem = CoreDataError(.migrationMissingSourceModel, "a model of a migration stage is missing: \(message)")
    }

    /// The error of a model whose checksum is not the expected one.
    private static func check(_ model: ManagedObjectModel, _ checksum: String) -> CoreDataError? {
        guard model.versionChecksum != checksum else { return nil }
        return CoreDataError(
            .migrationMissingSourceModel,
            "a migration stage references a model with the checksum \(checksum), but the model's checksum is \(model.versionChecksum)"
        )
    }
}
