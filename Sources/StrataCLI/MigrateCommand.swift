import ArgumentParser
import Foundation
import Strata
import StrataStore

/// `strata migrate PATH --model MODEL [--dry-run]`: migrates a store to a newer model version.
struct MigrateCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to a newer version of its model (lightweight migration).",
        discussion: """
            Infers the mapping from the model the store was written with (kept in its metadata) \
            to MODEL, prints what changes and how (metadata only, in place, rewrite in place, or \
            rewrite), and migrates the store: in place when the change only adds to the store's \
            layout or retires parts of it; by rewriting its log in place, keeping object IDs and \
            history, when every stored row converts to one row of the new model; else by writing \
            a new store that replaces the old one in one atomic step; an interrupted migration leaves the old store or the new one. A rewrite in place prints a line per segment of the log it rewrote; other progress goes to standard error. With --dry-run, only prints what changes and checks the stored objects against the \
            uniqueness constraints MODEL adds (a duplicate fails the dry run as it would fail the \
            migration). \
            Prints the seconds taken and the bytes of store files written.
            """)

    @OptionGroup var store: StoreArguments

    @Option(help: "The new model: an .xcdatamodeld (its current version) or .xcdatamodel directory.")
    var model: String

    @Flag(help: "Print what changes and check the stored objects without migrating.")
    var dryRun = false

    func run() throws {
        StoreArguments.logWarningsOnly(except: "strata.migration")
        guard FileManager.default.fileExists(atPath: store.url.appendingPathComponent("manifest").path) else {
            throw StoreError(.notFound, "no store at this path", path: store.path)
        }
        let destination = try ManagedObjectModel(checkedContentsOf: URL(fileURLWithPath: model))
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: store.url)
        if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            print("The store already matches the model: nothing to migrate.")
            return
        }
        guard let source = try ManagedObjectModel.storeModel(at: store.url) else {
            throw CoreDataError(
                .migrationMissingSourceModel,
                "the store does not record the model it was written with; open it once with that model")
        }
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        for line in MigrationReport.lines(mapping, source: source, destination: destination) { print(line) }
        print("Method: \(try MigrationMethod.forStore(at: store.url, from: source, to: destination).summary)")
        guard !dryRun else {
            let checked = try MigrationMethod.checkStoredObjects(at: store.url, from: source, to: destination)
            if checked > 0 {
                print("Stored objects: no two share the values of an added uniqueness constraint (\(checked) checked).")
            }
            return
        }
        let started = Date()
        let clock = ContinuousClock.now
        let coordinator = PersistentStoreCoordinator(managedObjectModel: destination)
        let opened = try coordinator.addPersistentStore(
            type: .strata, at: store.url,
            options: [
                MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true,
                PersistentStoreOptionKey.migrationProgress: MigrationReport.printProgress,
            ])
        try coordinator.remove(opened)
        let elapsed = ContinuousClock.now - clock
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "Migrated in \(String(format: "%.3f", seconds)) s; \(MigrationReport.bytesWritten(in: store.url, since: started)) bytes of store files written."
        )
    }
}

/// The text `strata migrate` prints about a mapping.
enum MigrationReport {
    /// One line an entity mapping, then one a changed property.
    static func lines(_ mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel) -> [String]
    {
        var lines: [String] = []
        for entityMapping in mapping.entityMappings {
            let sourceName = entityMapping.sourceEntityName ?? "",
                destinationName = entityMapping.destinationEntityName ?? ""
            switch entityMapping.mappingType {
            case .addEntityMappingType: lines.append("+ \(destinationName): new entity")
            case .removeEntityMappingType: lines.append("- \(sourceName): removed with its objects")
            case .copyEntityMappingType: lines.append("= \(destinationName): unchanged")
            default:
                lines.append(
                    "~ \(destinationName)"
                        + (sourceName == destinationName ? ": changed" : ": renamed from \(sourceName)"))
                guard let from = source.entitiesByName[sourceName], let to = destination.entitiesByName[destinationName]
                else { continue }
                lines += propertyLines(entityMapping, from: from, to: to)
            }
        }
        return lines
    }

    /// The changed properties of a transformed entity.
    private static func propertyLines(
        _ mapping: EntityMapping, from: EntityDescription, to: EntityDescription
    ) -> [String] {
        var lines: [String] = []
        var used = Set<String>()
        for property in (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? []) {
            guard let name = property.name, let target = to.propertiesByName[name] else { continue }
            guard let key = property.valueExpression?.keyPath, let old = from.propertiesByName[key] else {
                lines.append("    + \(name): new, default value")
                continue
            }
            used.insert(key)
            var changes: [String] = []
            if key != name { changes.append("renamed from \(key)") }
            if let was = old as? AttributeDescription, let now = target as? AttributeDescription,
                was.attributeType != now.attributeType
            {
                changes.append("type \(was.type) → \(now.type)")
            }
            if old.isOptional != target.isOptional {
                changes.append(target.isOptional ? "now optional" : "now required")
            }
            if let was = old as? RelationshipDescription, let now = target as? RelationshipDescription,
                was.isToMany != now.isToMany
            {
                changes.append(now.isToMany ? "now to-many" : "now to-one")
            }
            if !changes.isEmpty { lines.append("    ~ \(name): " + changes.joined(separator: ", ")) }
        }
        for (name, property) in from.propertiesByName.sorted(by: { $0.key < $1.key })
        where !used.contains(name) && !property.isTransient && !(property is FetchedPropertyDescription) {
            lines.append("    - \(name): removed")
        }
        let before = constraintNames(from), after = constraintNames(to)
        for names in after.subtracting(before).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            lines.append("    + unique (\(names.joined(separator: ", "))): uniqueness constraint added")
        }
        for names in before.subtracting(after).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            lines.append("    - unique (\(names.joined(separator: ", "))): uniqueness constraint removed")
        }
        return lines
    }

    /// The uniqueness constraints `entity` declares, each as its sorted property names.
    private static func constraintNames(_ entity: EntityDescription) -> Set<[String]> {
        Set(
            entity.uniquenessConstraints.map { constraint in
                constraint.map { ($0 as? String) ?? ($0 as? PropertyDescription)?.name ?? "\($0)" }.sorted()
            })
    }

    /// Prints one line for each segment of the log a rewrite in place has rewritten.
    static let printProgress: MigrationProgressHandler = { progress in print(line(progress)) }

    /// The line of ``printProgress``: `Rewrote segment 2 of 5: 1200 records, 3400 rows, 1048576 bytes written`.
    static func line(_ progress: LogRewriteProgress) -> String {
        "Rewrote segment \(progress.segmentsDone) of \(progress.segmentCount): \(progress.report.records) records, "
            + "\(progress.report.rows) rows, \(progress.report.bytesWritten) bytes written"
    }

    /// The bytes of the files under `directory` modified since `date`.
    static func bytesWritten(in directory: URL, since date: Date) -> Int64 {
        guard
            let files = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.contentModificationDateKey, .fileSizeKey])
        else { return 0 }
        var total: Int64 = 0
        for case let file as URL in files {
            guard let values = try? file.resourceValues(forKeys: [.contentModificationDateKey, .fileSizeKey]),
                let modified = values.contentModificationDate, modified >= date
            else { continue }
            total += Int64(values.fileSize ?? 0)
        }
        return total
    }
}
