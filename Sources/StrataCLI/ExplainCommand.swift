import ArgumentParser
import Foundation
import Strata

/// `strata explain PATH --model MODEL --entity NAME [--predicate FORMAT] [--sort KEY[:desc]]...
/// [--limit N] [--offset N] [--count] [--json]`: how a fetch would find its objects.
struct ExplainCommand: StrataSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show how a fetch would find its objects: fetch indexes, scan, filter, early stop.",
        discussion: """
            Opens the store read-only with the model it was written with, plans the fetch of the \
            entity with the predicate (Core Data's format syntax), sort keys and limit, and prints \
            the plan without reading any row. With --count, plans count(for:) instead.
            """)

    @OptionGroup var store: StoreArguments

    @Option(help: "The model the store was written with: an .xcdatamodeld or .xcdatamodel directory.")
    var model: String

    @Option(help: "The entity to fetch.")
    var entity: String

    @Option(help: "The predicate, in Core Data's format syntax (salary > 150000 AND active == YES).")
    var predicate: String?

    @Option(help: "A sort key, KEY (ascending) or KEY:desc; repeat for several keys.")
    var sort: [String] = []

    @Option(help: "The fetch limit (0: none).")
    var limit = 0

    @Option(help: "The fetch offset.")
    var offset = 0

    @Flag(help: "Plan count(for:) rather than fetch.")
    var count = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        StoreArguments.logWarningsOnly()
        try store.checkDirectoryExists()
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try ManagedObjectModel(checkedContentsOf: URL(fileURLWithPath: model)))
        let opened = try coordinator.addPersistentStore(
            type: .strata, at: store.url, options: [PersistentStoreOptionKey.readOnly: true])
        defer { try? coordinator.remove(opened) }
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try predicate.map { try FetchPredicate(checkedFormat: $0, argumentArray: []) }
        request.sortDescriptors = sort.map { key in
            let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
            return FetchSortDescriptor(
                key: parts[0], ascending: parts.count < 2 || parts[1].lowercased().hasPrefix("asc"))
        }
        request.fetchLimit = limit
        request.fetchOffset = offset
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let plan = try context.performAndWait {
            count ? try context.explainCount(for: request) : try context.explain(request)
        }
        if json {
            try Output.json(PlanReport(plan))
        } else {
            print(plan.description)
        }
    }
}

/// What `strata explain --json` prints.
struct PlanReport: Encodable {
    var entity: String
    var operation: String
    var access: String
    var usesIndex: Bool
    var scan: Bool
    var filter: String?
    var filtersEntityTag: Bool
    var readsRows: Bool
    var sortsInMemory: Bool
    var stopsAfter: Int?
    var plan: [String]

    init(_ plan: FetchPlan) {
        entity = plan.entityName
        operation = plan.operation == .count ? "count" : "fetch"
        switch plan.access {
        case .none: access = "none"
        case .scan: access = "scan"
        case .index(let use): access = "index \(use)"
        case .orderedIndex(let key, let descending, let within):
            access = "walk \(key) \(descending ? "descending" : "ascending")" + (within.map { " within \($0)" } ?? "")
        }
        usesIndex = plan.usesIndex
        scan = plan.isScan
        filter = plan.filter
        filtersEntityTag = plan.filtersEntityTag
        readsRows = plan.readsRows
        sortsInMemory = plan.sortsInMemory
        stopsAfter = plan.stopsAfter
        self.plan = plan.description.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
