import Foundation
import Logging
internal import StrataStore

private let logger = Logger(label: "strata.migration")

/// A migration step made without rewriting the store's log: the engine schema only grows
/// (``StoreMapping/evolved(onto:)``), rows written before read their new columns as the
/// attribute's default value (optional or required, as Core Data fills it into existing objects)
/// or `nil` without one, and every object keeps its ID and its history.
///
/// It applies when each change is one of: an entity added (a new root, or a sub-entity that
/// leaves the other entities' tags as they were), a root entity without sub-entities removed
/// (its rows stay in the log, unread), an optional attribute or relationship added or removed,
/// a required attribute added with a default value, a fetch index added or removed, a uniqueness
/// constraint added (the stored objects checked first, ``AddedUniquenessConstraint``; the
/// engine's fetch index on its columns is built when the store opens), a property made optional.
/// Renames, type changes, hierarchy changes, properties made required, narrowed relationship
/// counts, new derived attributes and removed uniqueness constraints are migrated by rewriting
/// the store.
///
/// Crash-safe: the new metadata is written beside the store first (`metadata.plist.inplace`),
/// then the engine's manifest is replaced (the commit point), then the metadata file is renamed
/// into place; ``PendingMigrationMetadata/resolve(at:)`` finishes or drops an interrupted step when the store is
/// next added (and reading the metadata meanwhile reads the committed step's), so the store
/// opens with the old model or the new one, never a mix.
struct InPlaceMigration {
    /// The engine schema after the step.
    let schema: Schema
    /// The values rows written before read in the new columns (per engine entity and column).
    let defaults: [Int: [Int: Value]]

    /// The in-place step from `source` to `destination` of the store at `url`, or `nil` when
    /// the change needs a rewrite.
    ///
    /// - Throws: ``CoreDataError`` when a model cannot be laid out or a default not stored.
    static func plan(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel
    ) throws -> InPlaceMigration? {
        guard let stored = try? Store.storedSchema(at: url) else { return nil }
        let before = try PersistentStoreCoordinator(managedObjectModel: source).mapping.get().evolved(onto: stored)
        let after = try PersistentStoreCoordinator(managedObjectModel: destination).mapping.get().evolved(onto: stored)
        guard before.schema == stored, after.schema != stored else { return nil }
        var defaults: [Int: [Int: Value]] = [:]
        for entity in destination.entities {
            guard entity.renamingIdentifier == nil || entity.renamingIdentifier == entity.entityName,
                let layout = after.layouts[entity.entityName]
            else { return nil }
            guard let old = source.entitiesByName[entity.entityName] else { continue }
            guard let was = before.layouts[entity.entityName], was.storeEntity == layout.storeEntity,
                was.tag == layout.tag,
                AddedUniquenessConstraint.names(of: old).isSubset(of: AddedUniquenessConstraint.names(of: entity))
            else { return nil }
            for property in entity.properties where !property.isTransient {
                guard property.renamingIdentifier == nil || property.renamingIdentifier == property.name else {
                    return nil
                }
                // A new property on a column the stored rows already have (a sibling's): they hold no
                // default there, and this entity's rows may hold values of a property removed before.
                if old.propertiesByName[property.name] == nil, let column = layout.columns[property.name],
                    column < stored.entities[layout.storeEntity].columns.count
                {
                    return nil
                }
                if let previous = old.propertiesByName[property.name] {
                    guard Self.keepsRows(previous, property),
                        was.columns[property.name] == layout.columns[property.name],
                        was.joins[property.name]?.storeEntity == layout.joins[property.name]?.storeEntity
                    else { return nil }
                } else if let attribute = property as? AttributeDescription {
                    guard !(attribute is DerivedAttributeDescription) else { return nil }
                    if let value = attribute.defaultValue, let column = layout.columns[attribute.name] {
                        let stored = try ValueConversion.storeValue(value, for: attribute)
                        guard defaults[layout.storeEntity]?[column].map({ $0 == stored }) ?? true else { return nil }
                        defaults[layout.storeEntity, default: [:]][column] = stored
                    } else if !attribute.isOptional {
                        return nil
                    }
                } else if !property.isOptional {
                    return nil
                }
            }
        }
        for entity in source.entities where destination.entitiesByName[entity.entityName] == nil {
            guard entity.superentity == nil, entity.subentities.isEmpty else { return nil }
        }
        return InPlaceMigration(schema: after.schema, defaults: defaults)
    }

    /// Whether rows holding `old` read as they are for `new` (a property of the same name).
    private static func keepsRows(_ old: PropertyDescription, _ new: PropertyDescription) -> Bool {
        if old.isTransient || (!new.isOptional && old.isOptional) { return false }
        switch (old, new) {
        case (let was as AttributeDescription, let now as AttributeDescription):
            return was.attributeType == now.attributeType
                && (was is DerivedAttributeDescription) == (now is DerivedAttributeDescription)
                && (was is CompositeAttributeDescription) == (now is CompositeAttributeDescription)
        case (let was as RelationshipDescription, let now as RelationshipDescription):
            return was.destinationEntity?.entityName == now.destinationEntity?.entityName
                && was.isToMany == now.isToMany
                && was.isOrdered == now.isOrdered && now.minCount <= was.minCount
                && (now.maxCount == 0 || (was.maxCount != 0 && now.maxCount >= was.maxCount))
        default:
            return false
        }
    }

    /// Makes the step: pending metadata, the engine's manifest, then the metadata in place.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the engine refuses the change (nothing
    ///   changed then), `persistentStoreSave` when the metadata cannot be written.
    func apply(at url: URL, destination: ManagedObjectModel, metadata: [String: Any]) throws {
        do {
            try PendingMigrationMetadata.inPlace.apply(destination: destination, metadata: metadata, at: url) {
                try Store.evolveSchema(at: url, to: schema, defaults: defaults)
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(
                .migration, "the store at \(url.path) cannot be migrated in place: \(error)", underlyingError: error)
        }
        logger.debug(
            "migrated store in place", metadata: ["path": "\(url.path)", "entities": "\(schema.entities.count)"])
    }

    /// Whether `error`, thrown by ``apply(at:destination:metadata:)``, says the store went through
    /// as many in-place changes as its engine can record: the step is then made by a rewrite.
    static func needsRewrite(after error: CoreDataError) -> Bool {
        (error.underlyingError as? StoreError)?.code == .schemaMismatch
    }
}
