import Foundation

/// How a lightweight migration changes a store (a Strata addition; Core Data does not say).
public enum MigrationMethod: String, Sendable, Hashable {
    /// The rows stay as they are: only the store's metadata is replaced.
    case metadataOnly
    /// The engine schema grows in place: the log is not rewritten, object IDs and history stay.
    case inPlace
    /// The log is rewritten in place, segment by segment, every row converted and every key kept:
    /// object IDs and history are kept.
    case inPlaceRewrite
    /// A new store is written through a ``MigrationManager`` and replaces the old one; objects get new IDs.
    case rewrite

    /// How migrating the store at `url` from `source` to `destination` is made, as
    /// ``PersistentStoreCoordinator`` does it when it adds the store.
    ///
    /// - Parameters:
    ///   - url: the store directory.
    ///   - source: the model the store was written with (``ManagedObjectModel/storeModel(at:)``).
    ///   - destination: the model to migrate to.
    /// - Returns: the method.
    /// - Throws: ``CoreDataError`` when a model cannot be laid out, `inferredMappingModel` when
    ///   the change cannot be inferred.
    public static func forStore(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel
    ) throws -> MigrationMethod {
        if try StoreRowCompatibility.rowsUnchanged(from: source, to: destination) { return .metadataOnly }
        if try InPlaceMigration.plan(at: url, from: source, to: destination) != nil { return .inPlace }
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        return try InPlaceRewrite.plan(at: url, from: source, to: destination, mapping: mapping) == nil
            ? .rewrite : .inPlaceRewrite
    }

    /// Checks the objects stored at `url` against what migrating them from `source` to
    /// `destination` requires of them, as the migration does before it writes anything: no two
    /// objects of an entity may hold the same values for a uniqueness constraint `destination`
    /// adds to it. Reads the store and changes nothing.
    ///
    /// - Returns: how many added uniqueness constraints were checked (0 when none is added).
    /// - Throws: ``CoreDataError`` `migrationConstraintViolation` naming the entity, the
    ///   constrained properties and the values two stored objects share, or `migration` when
    ///   the store cannot be read.
    @discardableResult
    public static func checkStoredObjects(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel
    ) throws -> Int {
        try AddedUniquenessConstraint.checkStoredObjects(at: url, from: source, to: destination)
    }

    /// What the method does, for people.
    public var summary: String {
        switch self {
        case .metadataOnly: "metadata only (every row stays as it is)"
        case .inPlace: "in place (the log is not rewritten; object IDs and history are kept)"
        case .inPlaceRewrite:
            "rewrite in place (every row converted segment by segment; object IDs and history are kept)"
        case .rewrite: "rewrite (a new store replaces the old one; objects get new IDs)"
        }
    }
}
