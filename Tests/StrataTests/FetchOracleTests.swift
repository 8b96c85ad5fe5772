import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The correctness oracle: random datasets, random format predicates, sorts, limits and offsets,
/// fetched through Strata from two stores holding the same data (one with fetch indexes, so the
/// query planner takes index paths; one without, so it scans), with and without unsaved changes
/// in the context, and compared with a plain in-memory evaluation written independently of
/// Strata's evaluator.
///
/// `STRATA_ORACLE_SEED` replays one run; `STRATA_ORACLE_CASES` sets how many fetches (default 2,000).
@Suite struct FetchOracleTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seed = environment["STRATA_ORACLE_SEED"].flatMap(UInt64.init) ?? 20_261_122
    static let cases = environment["STRATA_ORACLE_CASES"].flatMap(Int.init) ?? 2_000
    static let casesPerBatch = 50

    @Test func randomFetchesAgreeWithTheOracle() throws {
        var random = SplitMix64(seed: Self.seed)
        let stored = OracleDataset(count: 240, random: &random)
        let folder = TemporaryDirectory()
        let containers = try [true, false].map { indexed in
            try Self.container(holding: stored, indexed: indexed, at: folder.store(indexed ? "Indexed" : "Plain"))
        }
        var generator = OracleConditionGenerator(random: SplitMix64(seed: Self.seed &+ 1))
        var failures: [String] = []
        for batch in 0..<max(1, Self.cases / Self.casesPerBatch) where failures.count < 5 {
            // Every other batch runs with unsaved inserts, updates and deletes in the contexts.
            let changes = batch % 2 == 1 ? OracleChange.random(batch: batch, in: stored, &random) : []
            var current = stored
            for change in changes { change.apply(to: &current) }
            let contexts = try containers.map { container in
                let context = container.newBackgroundContext()
                try context.performAndWait { for change in changes { try change.apply(to: context) } }
                return context
            }
            for number in 0..<Self.casesPerBatch where failures.count < 5 {
                let fetch = OracleFetch.random(&generator, &random, hasChanges: !changes.isEmpty)
                let expected = fetch.expected(current: current, stored: stored)
                for (context, indexed) in zip(contexts, [true, false]) {
                    let outcome = Result { try context.performAndWait { try fetch.run(in: context) } }
                    if case .success(let actual) = outcome, actual == expected { continue }
                    failures.append(
                        """
                        seed \(Self.seed) batch \(batch) case \(number) \(indexed ? "indexed" : "plain") store:
                          \(fetch)
                          expected \(expected)
                          got      \((try? outcome.get()).map { "\($0)" } ?? "\(outcome)")
                        """)
                }
            }
        }
        #expect(
            failures.isEmpty, "\(failures.count) fetches disagree with the oracle:\n\(failures.joined(separator: "\n"))"
        )
    }

    /// A container at `url` holding `dataset`, with or without fetch indexes.
    static func container(holding dataset: OracleDataset, indexed: Bool, at url: URL) throws -> PersistentContainer {
        let container = try GraphModel.container(at: url, model: FetchOracleModel.make(indexed: indexed))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owners = dataset.owners.map { owner in
                let object = ManagedObject(
                    entity: container.managedObjectModel.entitiesByName["Owner"]!, insertInto: context)
                object.setValue(owner.serial, forKey: "serial")
                object.setValue(owner.name, forKey: "name")
                object.setValue(owner.rank, forKey: "rank")
                return object
            }
            for item in dataset.items {
                let object = ManagedObject(
                    entity: container.managedObjectModel.entitiesByName["Item"]!, insertInto: context)
                try OracleChange.set(item, on: object, owners: owners)
            }
            try context.save()
        }
        return container
    }
}

/// One unsaved change the oracle makes in a context and in its own copy of the data.
enum OracleChange {
    case insert(OracleItem)
    case update(OracleItem)
    case delete(serial: Int64)

    /// A few inserts, updates and deletes of distinct items.
    static func random(batch: Int, in dataset: OracleDataset, _ random: inout SplitMix64) -> [OracleChange] {
        var serials = dataset.items.map(\.serial).shuffled(using: &random)
        var changes: [OracleChange] = []
        for number in 0..<3 {
            let owner = Int.random(in: 0...dataset.owners.count, using: &random)
            let item = OracleItem(
                serial: Int64(100_000 + batch * 10 + number), values: OracleDataset.randomValues(&random),
                owner: owner == dataset.owners.count ? nil : owner)
            changes.append(.insert(item))
        }
        for _ in 0..<6 {
            let owner = Int.random(in: 0...dataset.owners.count, using: &random)
            changes.append(
                .update(
                    OracleItem(
                        serial: serials.removeLast(), values: OracleDataset.randomValues(&random),
                        owner: owner == dataset.owners.count ? nil : owner)))
        }
        for _ in 0..<3 { changes.append(.delete(serial: serials.removeLast())) }
        return changes
    }

    /// Applies the change to the oracle's data.
    func apply(to dataset: inout OracleDataset) {
        switch self {
        case .insert(let item): dataset.items.append(item)
        case .update(let item): dataset.items[dataset.items.firstIndex { $0.serial == item.serial }!] = item
        case .delete(let serial): dataset.items.removeAll { $0.serial == serial }
        }
    }

    /// Makes the change in `context`, unsaved.
    func apply(to context: ManagedObjectContext) throws {
        let owners = try OracleChange.owners(in: context)
        switch self {
        case .insert(let item):
            let entity = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Item"]!
            try Self.set(item, on: ManagedObject(entity: entity, insertInto: context), owners: owners)
        case .update(let item): try Self.set(item, on: try Self.item(item.serial, in: context), owners: owners)
        case .delete(let serial): context.delete(try Self.item(serial, in: context))
        }
    }

    /// Sets every attribute and the owner of `object` to those of `item`.
    static func set(_ item: OracleItem, on object: ManagedObject, owners: [ManagedObject]) throws {
        object.setValue(item.serial, forKey: "serial")
        for (name, _) in FetchOracleModel.itemAttributes { object.setValue(item.values[name], forKey: name) }
        object.setValue(item.owner.map { owners[$0] }, forKey: "owner")
    }

    private static func item(_ serial: Int64, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = FetchPredicate(key: "serial", .equalTo, serial)
        return try context.fetch(request).first!
    }

    private static func owners(in context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "Owner")
        request.sortDescriptors = [FetchSortDescriptor(key: "serial")]
        return try context.fetch(request)
    }
}

/// One random fetch: entity, format predicate, sort, limit, offset, result type, pending changes.
struct OracleFetch: CustomStringConvertible {
    enum Condition {
        case item(OracleCondition)
        case owner(OracleOwnerCondition)
    }

    enum Result {
        case objects
        case objectIDs
        case batched
    }

    var condition: Condition
    var sort: [(key: String, ascending: Bool)]
    var limit: Int
    var offset: Int
    var result: Result
    var includesPendingChanges: Bool

    /// What the oracle compares: the fetched serials in order (as a sorted set without
    /// pending changes, where only membership is defined) and `count(for:)`.
    struct Outcome: Equatable, CustomStringConvertible {
        var serials: [Int64]
        var count: Int
        var description: String { "\(count) counted, serials \(serials)" }
    }

    static func random(
        _ generator: inout OracleConditionGenerator, _ random: inout SplitMix64, hasChanges: Bool
    ) -> OracleFetch {
        let owners = Int.random(in: 0..<5, using: &random) == 0
        let keys = owners ? ["name", "rank"] : FetchOracleModel.orderedAttributes + ["owner.name"]
        let sort = (0..<Int.random(in: 0...2, using: &random)).map { _ in
            (key: keys.randomElement(using: &random)!, ascending: Bool.random(using: &random))
        }
        let pending = !hasChanges || Int.random(in: 0..<4, using: &random) > 0
        let cut = pending && Bool.random(using: &random)
        return OracleFetch(
            condition: owners ? .owner(generator.ownerCondition()) : .item(generator.condition()), sort: sort,
            limit: cut ? Int.random(in: 0...25, using: &random) : 0,
            offset: cut ? Int.random(in: 0...10, using: &random) : 0,
            result: [.objects, .objectIDs, .batched].randomElement(using: &random)!, includesPendingChanges: pending)
    }

    var description: String {
        let (format, arguments) = formatAndArguments
        return
            "\(entityName) where \(format) \(arguments) sorted by \(sort) limit \(limit) offset \(offset) \(result) pending \(includesPendingChanges)"
    }

    /// The predicate's format string and arguments.
    var formatAndArguments: (format: String, arguments: [Any]) {
        switch condition {
        case .item(let condition): return (condition.format, condition.arguments)
        case .owner(let condition): return (condition.format, condition.arguments)
        }
    }

    var entityName: String {
        if case .owner = condition { return "Owner" }
        return "Item"
    }

    /// The oracle's answer. Without pending changes the stored data decides membership.
    func expected(current: OracleDataset, stored: OracleDataset) -> Outcome {
        let data = includesPendingChanges ? current : stored
        var rows: [(serial: Int64, keys: [Any?])]
        switch condition {
        case .item(let condition):
            rows = data.items.filter { condition.matches($0, data) }.map { item in
                let keys: [Any?] = sort.map { key -> Any? in
                    guard key.key == "owner.name" else { return item.values[key.key] }
                    guard let owner = item.owner else { return nil }
                    return current.owners[owner].name
                }
                return (item.serial, keys)
            }
        case .owner(let condition):
            rows = data.owners.indices.filter { condition.matches($0, data) }.map { index in
                let owner = data.owners[index]
                let keys: [Any?] = sort.map { key -> Any? in key.key == "name" ? owner.name as Any? : owner.rank as Any?
                }
                return (owner.serial, keys)
            }
        }
        guard includesPendingChanges else {
            let serials = rows.map(\.serial).sorted()
            return Outcome(serials: serials, count: serials.count)
        }
        rows.sort { left, right in
            for (index, key) in sort.enumerated() {
                let order = Self.order(left.keys[index], right.keys[index])
                if order != 0 { return key.ascending ? order < 0 : order > 0 }
            }
            return left.serial < right.serial
        }
        let window = rows.dropFirst(offset).prefix(limit > 0 ? limit : Int.max)
        return Outcome(serials: window.map(\.serial), count: window.count)
    }

    /// `nil` first, then the oracle's value order.
    private static func order(_ left: Any?, _ right: Any?) -> Int {
        switch (left, right) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (left?, right?): return OracleValue.order(left, right)
        }
    }

    /// Runs the fetch and its count in `context`.
    func run(in context: ManagedObjectContext) throws -> Outcome {
        let (format, arguments) = formatAndArguments
        func configure<T>(_ request: FetchRequest<T>) throws -> FetchRequest<T> {
            request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            request.sortDescriptors =
                sort.map { FetchSortDescriptor(key: $0.key, ascending: $0.ascending) } + [
                    FetchSortDescriptor(key: "serial")
                ]
            request.fetchLimit = limit
            request.fetchOffset = offset
            request.includesPendingChanges = includesPendingChanges
            return request
        }
        let objects: [ManagedObject]
        switch result {
        case .objects:
            objects = try context.fetch(try configure(FetchRequest<ManagedObject>(entityName: entityName)))
        case .batched:
            let request = try configure(FetchRequest<ManagedObject>(entityName: entityName))
            request.fetchBatchSize = 7
            objects = try context.fetch(request)
        case .objectIDs:
            let request = try configure(FetchRequest<ManagedObjectID>(entityName: entityName))
            request.resultType = .managedObjectIDResultType
            objects = try context.fetch(request).map { context.object(with: $0) }
        }
        var serials = objects.map { $0.value(forKey: "serial") as! Int64 }
        if !includesPendingChanges { serials.sort() }
        let count = try context.count(for: try configure(FetchRequest<ManagedObject>(entityName: entityName)))
        return Outcome(serials: serials, count: count)
    }
}
