import Foundation
import Logging
internal import StrataStore

private let logger = Logger(label: "strata.migration")

/// A migration step that rewrites the store's log in place, record by record and segment by
/// segment (``Store/rewriteLog(at:_:configuration:)``), converting every row with the inferred
/// mapping and keeping every primary key: object IDs, their URIs, the persistent history and
/// its tokens keep their meaning.
///
/// It applies to the changes an in-place schema change cannot make (renamed entities and
/// properties, attribute type changes, properties made required, changed uniqueness-free
/// layouts, values converted under an unchanged layout, removed uniqueness constraints) when no
/// two stored entity hierarchies share a new one (so that keys stay unique), every mapping is a plain copy or transform without a migration policy or
/// a custom value expression, no relationship narrows its counts or becomes required, and
/// to-many relationships keep how they are stored (in a join entity or through their inverse)
/// or a one-to-one becomes one-to-many, or a one-to-many one-to-one (each object's one related
/// object read first). An entity removed from a hierarchy that stays loses its
/// objects by their tag (references to them cleared, their pairs dropped); an entity moved out
/// of its hierarchy takes its rows, by tag, to its new engine entity. Other changes (an entity
/// moved into another stored hierarchy, several hierarchies merged into one, custom
/// mapping models with a policy, added uniqueness constraints the stored rows cannot be checked
/// for (``AddedUniquenessConstraint/checkableBeforeRewrite(_:from:before:)``), other to-one ↔ to-many changes)
/// go through ``MigrationManager`` into a new store.
///
/// Crash-safe: the new metadata is written beside the store first (`metadata.plist.rewrite`),
/// then the engine rewrites its log and replaces its manifest (the commit point, recognised by
/// the stored schema being the new model's own layout and every segment being one the rewrite
/// wrote, so that a change converting values under an unchanged layout is recognised too), then
/// the metadata file is renamed into place.
struct InPlaceRewrite {
    /// How each row converts.
    let planner: RewritePlanner
    /// The required attributes without a default the stored objects must hold a value for.
    var requirements: [RequiredValue] { planner.requirements }
    /// How the engine converts the log of a store without objects of removed entities.
    var rewrite: LogRewrite { planner.logRewrite() }

    /// The rewrite of the store at `url` from `source` to `destination` through `mapping`, or
    /// `nil` when the change is not one a rewrite keeping keys can make.
    ///
    /// - Throws: ``CoreDataError`` when a model cannot be laid out or a default value not stored.
    static func plan(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel, mapping: MappingModel
    ) throws -> InPlaceRewrite? {
        guard let stored = try? Store.storedSchema(at: url) else { return nil }
        let before = try PersistentStoreCoordinator(managedObjectModel: source).mapping.get().evolved(onto: stored)
        let after = try PersistentStoreCoordinator(managedObjectModel: destination).mapping.get()
        guard before.schema == stored else { return nil }
        var planner = RewritePlanner(before: before, after: after, source: source, destination: destination)
        guard try planner.plan(mapping) else { return nil }
        return InPlaceRewrite(planner: planner)
    }

    /// Makes the step: pending metadata, the engine's rewrite of its log (reporting each segment
    /// to `progress`), then the metadata in place.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the engine cannot rewrite the log, a
    ///   validation error when a converted object misses a required value (nothing changed
    ///   then), `persistentStoreSave` when the metadata cannot be written.
    func apply(
        at url: URL, destination: ManagedObjectModel, metadata: [String: Any], progress: MigrationProgressHandler? = nil
    ) throws {
        var rewrite = try checkObjects(at: url)
        rewrite.progress = progress
        let report: LogRewriteReport
        do {
            // The commit point is recognised by the segments the rewrite writes, whose ids start at `next`.
            let first = Int(try Store.logFileIDs(at: url).next)
            report = try PendingMigrationMetadata.rewrite.apply(
                destination: destination, metadata: metadata, at: url,
                recording: [PendingMigrationMetadata.logFileKey: first]
            ) {
                try Store.rewriteLog(at: url, rewrite)
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(
                .migration, "the store at \(url.path) cannot be rewritten in place: \(error)", underlyingError: error)
        }
        logger.debug(
            "migrated store by rewriting its log in place",
            metadata: [
                "path": "\(url.path)", "records": "\(report.records)", "rows": "\(report.rows)",
                "bytesWritten": "\(report.bytesWritten)",
            ])
    }

    /// The store at `url` opened read-only with its stored schema, to check its objects before a step.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the store cannot be read.
    static func openForChecking(at url: URL) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        do {
            return try Store.open(at: url, schema: try Store.storedSchema(at: url), configuration: configuration)
        } catch {
            throw CoreDataError(
                .migration, "the store at \(url.path) cannot be read to check its objects: \(error)",
                underlyingError: error)
        }
    }

    /// Checks that every stored object holds a value for each required attribute that has no
    /// default (reading only the live rows of the entities concerned), as Core Data validates
    /// the objects a migration makes, finds the objects of removed entities (whose references
    /// are cleared and pairs dropped), and reads the one related object of each object whose
    /// to-many became a to-one kept in its own column.
    ///
    /// - Returns: how the engine converts the log.
    /// - Throws: ``CoreDataError`` `validationMissingMandatoryProperty` naming the attribute,
    ///   `validationRelationshipExceedsMaximumCount` when an object has several related objects
    ///   for a relationship become to-one, or `migration` when the store cannot be read.
    private func checkObjects(at url: URL) throws -> LogRewrite {
        guard !requirements.isEmpty || !planner.dropped.isEmpty || !planner.fills.isEmpty else { return rewrite }
        let store = try Self.openForChecking(at: url)
        defer { try? store.close() }
        var droppedKeys: [Int: Set<Int64>] = [:]
        for (entity, tags) in planner.dropped {
            try store.scan(entity, columns: [0]) { key, row in
                if case .int(let tag) = row[0], tags.contains(tag) { droppedKeys[entity, default: []].insert(key) }
            }
        }
        var filled: [[Int64: Int64]] = []
        for fill in planner.fills {
            var related: [Int64: Int64] = [:]
            var twice: Int64?
            let tags = Set(fill.tags)
            try store.scan(fill.entity, columns: [0, fill.column]) { key, row in
                guard twice == nil, case .int(let tag) = row[0], tags.contains(tag),
                    case .reference(let owner) = row[fill.column]
                else { return }
                if related.updateValue(key, forKey: owner) != nil { twice = owner }
            }
            if let twice {
                throw CoreDataError(
                    .validationRelationshipExceedsMaximumCount,
                    "\(fill.name) becomes to-one, and the stored object \(twice) has several related objects",
                    key: String(fill.name.split(separator: ".").last ?? ""))
            }
            filled.append(related)
        }
        for requirement in requirements {
            var missing: Int64?
            try store.scan(requirement.entity, columns: requirement.column < 0 ? [0] : [0, requirement.column]) {
                key, row in
                guard missing == nil, row[0] == .int(requirement.tag),
                    requirement.column < 0 || row[requirement.column].isNull
                else { return }
                missing = key
            }
            if let missing {
                throw CoreDataError(
                    .validationMissingMandatoryProperty,
                    "\(requirement.name) is required and has no default value, and the stored object \(missing) has no value for it",
                    key: String(requirement.name.split(separator: ".").last ?? ""))
            }
        }
        return planner.logRewrite(droppedKeys: droppedKeys, filled: filled)
    }
}
