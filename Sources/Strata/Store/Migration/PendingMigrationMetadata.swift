import Foundation
import Logging
internal import StrataStore

private let logger = Logger(label: "strata.migration")

/// The metadata a migration step made on the store itself (``InPlaceMigration``,
/// ``InPlaceRewrite``) writes beside the store before its commit point, and how an open after a
/// crash tells whether the step committed.
///
/// A step writes the new metadata to its pending file, changes the engine (whose manifest
/// replace is the commit point), then renames the pending file over the store's metadata. After
/// a crash the step committed exactly when the stored schema is the one the pending model lays
/// out: ``resolve(at:)`` then finishes it, else drops the pending file. A rewrite of the log
/// also records the file id its new segments start at (``logFileKey``): its commit point is then
/// recognised even when the stored schema stays the same (a change that converts values only).
struct PendingMigrationMetadata: Sendable {
    /// The metadata key of the segment file id a rewrite of the log writes from
    /// (``StrataStore/Store/logFileIDs(at:configuration:)``'s `next` before it): the rewrite
    /// committed when every segment of the store has at least this id.
    static let logFileKey = "StrataLogRewriteFirstSegment"

    /// The name of the pending file beside the store's metadata.
    let fileName: String
    /// What the step is called in the log.
    let stepName: String
    /// The engine schema the step commits for a model laid out as `mapping` over the schema stored now.
    let committedSchema: @Sendable (_ mapping: StoreMapping, _ stored: Schema) throws -> Schema

    /// An in-place step: the model's layout laid over the stored schema (``StoreMapping/evolved(onto:)``).
    static let inPlace = PendingMigrationMetadata(
        fileName: StoreMetadataFile.fileName + ".inplace", stepName: "in-place migration"
    ) {
        mapping, stored in try mapping.evolved(onto: stored).schema
    }
    /// A rewrite of the log in place: the model's own layout.
    static let rewrite = PendingMigrationMetadata(
        fileName: StoreMetadataFile.fileName + ".rewrite", stepName: "rewrite migration"
    ) {
        mapping, _ in mapping.schema
    }
    /// Every kind of pending step, in the order an open resolves them.
    static let all = [inPlace, rewrite]

    /// Makes a step: writes the store's `metadata` updated for `destination` as the pending file,
    /// with `extra` keys, runs `change` (the engine's change, which ends at the commit point),
    /// then puts the metadata in place. When `change` throws, the pending file is removed and the error rethrown.
    ///
    /// - Returns: what `change` returns.
    /// - Throws: what `change` throws; ``CoreDataError`` `persistentStoreSave` when the metadata
    ///   cannot be written, `migration` when it cannot be put in place.
    @discardableResult
    func apply<Result>(
        destination: ManagedObjectModel, metadata: [String: Any], at url: URL, recording extra: [String: Any] = [:],
        _ change: () throws -> Result
    ) throws -> Result {
        try writePending(destination: destination, metadata: metadata.merging(extra) { _, new in new }, at: url)
        let result: Result
        do {
            result = try change()
        } catch {
            try? FileManager.default.removeItem(at: url.appendingPathComponent(fileName))
            throw error
        }
        try commit(at: url)
        return result
    }

    /// Writes the store's `metadata`, updated for `destination` (its version hashes and archived
    /// model), as the pending file: the first act of a step.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreSave` when the file cannot be written.
    func writePending(destination: ManagedObjectModel, metadata: [String: Any], at url: URL) throws {
        let storeID = metadata[StoreUUIDKey] as? String ?? ""
        let updated = StoreMetadataFile.adding(
            archiveOf: destination,
            to: metadata.merging(StoreMetadataFile.metadata(for: destination, storeID: storeID)) { _, new in new })
        try StoreMetadataFile.write(updated, at: url, name: fileName)
    }

    /// The metadata of a step a crash interrupted after its commit point: the pending metadata,
    /// when the stored schema is the one the pending model commits (and, when it records a
    /// ``logFileKey``, every segment was written by the rewrite); `nil` when there is none or the
    /// step did not commit.
    func committedMetadata(at url: URL) -> [String: Any]? {
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent(fileName).path),
            let metadata = try? StoreMetadataFile.read(at: url, name: fileName),
            let model = try? StoreMetadataFile.sourceModel(from: metadata),
            let stored = try? Store.storedSchema(at: url),
            let mapping = try? PersistentStoreCoordinator(managedObjectModel: model).mapping.get(),
            (try? committedSchema(mapping, stored)) == stored
        else { return nil }
        if let first = metadata[Self.logFileKey].flatMap(ValueConversion.integer) {
            guard let oldest = (try? Store.logFileIDs(at: url))?.oldest, oldest >= first else { return nil }
        }
        return metadata
    }

    /// Finishes a step a crash interrupted: keeps its metadata when the step committed
    /// (``committedMetadata(at:)``), else drops it (the engine removes what the step left when
    /// the store is opened).
    ///
    /// - Throws: ``CoreDataError`` `migration` when the metadata cannot be put in place.
    func resolve(at url: URL) throws {
        let pending = url.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: pending.path) else { return }
        if committedMetadata(at: url) != nil {
            try commit(at: url)
            logger.debug("finished an interrupted \(stepName)", metadata: ["path": "\(url.path)"])
        } else {
            try? FileManager.default.removeItem(at: pending)
            logger.debug("dropped an interrupted \(stepName)", metadata: ["path": "\(url.path)"])
        }
    }

    /// Renames the pending metadata over the store's metadata and syncs the directory.
    private func commit(at url: URL) throws {
        guard
            rename(
                url.appendingPathComponent(fileName).path, url.appendingPathComponent(StoreMetadataFile.fileName).path)
                == 0
        else {
            throw CoreDataError(
                .migration,
                "cannot put the migrated metadata of \(url.path) in place: \(String(cString: strerror(errno)))")
        }
        do {
            try StoreMetadataFile.syncDirectory(url)
        } catch {
            throw CoreDataError(.migration, "cannot sync \(url.path) after the migration: \(error)")
        }
    }
}
