import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// A catalog of items with indexed attributes of several types, an owner (to-one) and a
/// sub-entity, for planner tests.
enum CatalogModel {
    /// Owner(name indexed, items) <- Item(code, rank, score, day indexed; flag, label; owner) <- SpecialItem(extra).
    static func make() -> ManagedObjectModel {
        let owner = ModelBuilder.entity("Owner", [ModelBuilder.attribute("name", .string)])
        let item = ModelBuilder.entity(
            "Item",
            [
                ModelBuilder.attribute("code", .string),
                ModelBuilder.attribute("rank", .integer64, defaultValue: Int64(0)),
                ModelBuilder.attribute("score", .double),
                ModelBuilder.attribute("day", .date),
                ModelBuilder.attribute("flag", .boolean, defaultValue: false),
                ModelBuilder.attribute("label", .string),
            ])
        let special = ModelBuilder.entity("SpecialItem", [ModelBuilder.attribute("extra", .integer32)])
        item.subentities = [special]
        ModelBuilder.inverse(
            ModelBuilder.relationship("items", from: owner, to: item, toMany: true),
            ModelBuilder.relationship("owner", from: item, to: owner))
        func index(_ entity: EntityDescription, _ names: [String]) {
            entity.indexes = names.map { name in
                FetchIndexDescription(
                    name: "by\(name)",
                    elements: [
                        FetchIndexElementDescription(property: entity.propertiesByName[name]!, collationType: .binary)
                    ])
            }
        }
        index(item, ["code", "rank", "score", "day"])
        index(owner, ["name"])
        return ModelBuilder.model([owner, item, special])
    }

    /// The day of item `i`.
    static func day(_ i: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(i) * 86_400) }

    /// A container at `url` with `count` items saved in batches of `batch` (one block each at
    /// least): item i has rank i, code `c%04d`, score (i * 37 % count) / 2, flag when i % 3 != 0,
    /// no label when i % 5 == 0, no owner when i % 7 == 0 (else one of 4 owners), and is a
    /// SpecialItem when i % 10 == 9.
    static func seeded(at url: URL, count: Int = 600, batch: Int = 60) throws -> PersistentContainer {
        let container = try GraphModel.container(at: url, model: make())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var owners: [ManagedObject] = []
            for name in ["ann", "ben", "cid", "dot"] {
                let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue(name, forKey: "name")
                owners.append(owner)
            }
            for i in 0..<count {
                let item = EntityDescription.insertNewObject(
                    forEntityName: i % 10 == 9 ? "SpecialItem" : "Item", into: context)
                item.setValue(String(format: "c%04d", i), forKey: "code")
                item.setValue(Int64(i), forKey: "rank")
                item.setValue(Double(i * 37 % count) / 2, forKey: "score")
                item.setValue(day(i), forKey: "day")
                item.setValue(i % 3 != 0, forKey: "flag")
                item.setValue(i % 5 == 0 ? nil : "label \(i % 11)", forKey: "label")
                item.setValue(i % 7 == 0 ? nil : owners[i % 4], forKey: "owner")
                if i % batch == batch - 1 { try context.save() }
            }
            try context.save()
        }
        return container
    }

    /// The names of the objects, by rank, as an oracle compares them.
    static func ranks(_ objects: [ManagedObject]) -> [Int64] {
        objects.map { ($0.value(forKey: "rank")) as? Int64 ?? -1 }
    }
}

/// The query planner: which plan each predicate shape gets, that index plans return what a
/// scan evaluated in memory returns, early stops and counts from indexes.
@Suite struct QueryPlanTests {
    typealias P = FetchPredicate

    /// The engine store behind the container's only store.
    static func engine(_ container: PersistentContainer) -> Store {
        container.persistentStoreCoordinator.persistentStores[0].engineStore!
    }

    /// Blocks looked up in the engine so far (cache hits and misses).
    static func blockReads(_ container: PersistentContainer) -> Int {
        let statistics = engine(container).statistics
        return statistics.cacheHits + statistics.cacheMisses
    }

    /// The items `request` matches by an in-memory evaluation of everything, sorted and cut
    /// as the request says: the oracle planned fetches are compared with.
    static func oracle(
        _ request: FetchRequest<ManagedObject>, in context: ManagedObjectContext
    ) throws -> [ManagedObject] {
        let all = FetchRequest<ManagedObject>(entityName: request.entityName!)
        all.includesSubentities = request.includesSubentities
        all.includesPendingChanges = request.includesPendingChanges
        var objects = try context.fetch(all).filter { request.predicate?.evaluate(with: $0) ?? true }
        if let descriptors = request.sortDescriptors {
            objects.sort { left, right in
                for descriptor in descriptors {
                    let order = descriptor.compare(
                        try? FetchPredicate.value(atKeyPath: descriptor.key, of: left),
                        try? FetchPredicate.value(atKeyPath: descriptor.key, of: right))
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return false
            }
        }
        let start = min(request.fetchOffset, objects.count)
        let end = request.fetchLimit > 0 ? min(objects.count, start + request.fetchLimit) : objects.count
        return Array(objects[start..<end])
    }

    /// The shapes the planner answers with indexes, and those it scans.
    static func shapes(owner: ManagedObject) -> [(P, String, Bool)] {
        [
            (P(key: "rank", .equalTo, 10), "rank ==", true),
            (P(key: "rank", .lessThan, 50), "rank <", true),
            (P(key: "rank", .lessThanOrEqualTo, 50), "rank <=", true),
            (P(key: "rank", .greaterThan, 590), "rank >", true),
            (P(key: "rank", .greaterThanOrEqualTo, 590), "rank >=", true),
            (P(key: "rank", .between, [100, 120]), "BETWEEN", true),
            (P(key: "rank", .in, [1, 5, 9, 1000]), "IN", true),
            (P(key: "score", .greaterThan, 250.5), "double range", true),
            (P(key: "day", .lessThan, CatalogModel.day(30)), "date range", true),
            (P(key: "code", .equalTo, "c0042"), "string ==", true),
            (P(key: "code", .beginsWith, "c00"), "BEGINSWITH", true),
            (P(key: "owner", .equalTo, owner), "to-one ==", true),
            (P(key: "owner", .equalTo, nil), "to-one == nil", true),
            (P(key: "owner", .in, [owner.objectID]), "to-one IN", true),
            (P(key: "label", .notEqualTo, nil), "not indexed", false),
            (P(key: "code", .notEqualTo, nil), "!= nil", true),
            (
                P(andPredicateWithSubpredicates: [P(key: "rank", .lessThan, 50), P(key: "flag", .equalTo, true)]),
                "AND with residual", true
            ),
            (
                P(andPredicateWithSubpredicates: [P(key: "rank", .lessThan, 80), P(key: "code", .beginsWith, "c00")]),
                "AND of two indexes", true
            ),
            (
                P(orPredicateWithSubpredicates: [P(key: "rank", .lessThan, 10), P(key: "rank", .greaterThan, 590)]),
                "OR of indexes", true
            ),
            (P(key: "code", .beginsWith, "C00", options: .caseInsensitive), "BEGINSWITH[c]", false),
            (P(key: "label", .equalTo, "label 3"), "unindexed ==", false),
            (
                P(orPredicateWithSubpredicates: [P(key: "rank", .lessThan, 10), P(key: "flag", .equalTo, false)]),
                "OR with a scan branch", false
            ),
            (P(notPredicateWithSubpredicate: P(key: "rank", .lessThan, 10)), "NOT", false),
            (P(key: "owner.name", .equalTo, "ann"), "key path through to-one", false),
        ]
    }

    @Test func eachShapeGetsItsPlanAndTheScanResults() throws {
        let folder = TemporaryDirectory()
        try CatalogModel.seeded(at: folder.store()).close()
        let container = try GraphModel.container(at: folder.store(), model: CatalogModel.make())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owners = FetchRequest<ManagedObject>(entityName: "Owner")
            owners.predicate = P(key: "name", .equalTo, "ben")
            let ben = try #require(try context.fetch(owners).first)
            for (predicate, shape, indexed) in Self.shapes(owner: ben) {
                for subentities in [true, false] {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.predicate = predicate
                    request.includesSubentities = subentities
                    request.sortDescriptors = [FetchSortDescriptor(key: "code")]
                    let plan = try context.explain(request)
                    #expect(plan.usesIndex == indexed, "\(shape): \(plan)")
                    #expect(plan.isScan == !indexed, "\(shape): \(plan)")
                    #expect(plan.filtersEntityTag == !subentities, "\(shape): only Item rows, not SpecialItem ones")
                    let expected = try Self.oracle(request, in: context)
                    #expect(!expected.isEmpty, "\(shape) matches something")
                    #expect(try context.fetch(request).map(\.objectID) == expected.map(\.objectID), "\(shape)")
                    #expect(try context.count(for: request) == expected.count, "\(shape)")
                    let ids = FetchRequest<ManagedObjectID>(entityName: "Item")
                    ids.resultType = .managedObjectIDResultType
                    ids.predicate = predicate
                    ids.includesSubentities = subentities
                    #expect(Set(try context.fetch(ids)) == Set(expected.map(\.objectID)), "\(shape)")
                }
            }
        }
        try container.close()
    }

    /// An in-memory store answers the same plans with the same results.
    @Test func inMemoryStoresFollowThePlans() throws {
        let container = PersistentContainer(name: "Catalog", managedObjectModel: CatalogModel.make())
        let description = PersistentStoreDescription()
        description.type = InMemoryStoreType
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue("ann", forKey: "name")
            for i in 0..<50 {
                let item = EntityDescription.insertNewObject(
                    forEntityName: i % 10 == 9 ? "SpecialItem" : "Item", into: context)
                item.setValue(String(format: "c%04d", i), forKey: "code")
                item.setValue(Int64(i), forKey: "rank")
                item.setValue(i % 3 != 0, forKey: "flag")
                item.setValue(i % 2 == 0 ? owner : nil, forKey: "owner")
            }
            try context.save()
            for (predicate, shape, _) in Self.shapes(owner: owner) {
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = predicate
                request.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: false)]
                request.fetchLimit = 7
                #expect(
                    try context.explain(request).usesIndex, "\(shape): an index lookup, or the walk of rank's index")
                #expect(
                    try context.fetch(request).map(\.objectID)
                        == (try Self.oracle(request, in: context)).map(\.objectID), "\(shape)")
                #expect(try context.count(for: request) == (try Self.oracle(request, in: context)).count, "\(shape)")
            }
        }
    }

    @Test func explainDescribesEveryPart() throws {
        let folder = TemporaryDirectory()
        let container = try CatalogModel.seeded(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = P(andPredicateWithSubpredicates: [
                P(key: "rank", .greaterThan, 100), P(key: "flag", .equalTo, true),
            ])
            request.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: false)]
            request.fetchLimit = 5
            let plan = try context.explain(request)
            #expect(
                plan.access
                    == .orderedIndex(key: "rank", descending: true, within: .lookup(key: "rank", condition: "> 100")))
            #expect(plan.stopsAfter == 5)
            // The walk reads only rows with rank > 100: flag is all its rows are tested for.
            #expect(plan.filter == P(key: "flag", .equalTo, true).predicateFormat)
            #expect(!plan.sortsInMemory)
            #expect(plan.description.contains("walk index on rank descending within rank > 100, stop after 5 matches"))

            let count = try context.explainCount(for: request)
            #expect(count.operation == .count)
            #expect(count.access == .index(.lookup(key: "rank", condition: "> 100")))
            #expect(count.readsRows, "flag has no index: the rows are read")
            #expect(count.filter == plan.filter, "the rows the lookup finds are tested for flag only")

            request.predicate = P(orPredicateWithSubpredicates: [
                P(key: "rank", .lessThan, 3), P(key: "code", .equalTo, "c0100"),
            ])
            let exact = try context.explainCount(for: request)
            #expect(
                exact.access
                    == .index(
                        .union([
                            .lookup(key: "rank", condition: "< 3"), .lookup(key: "code", condition: #"== "c0100""#),
                        ])))
            #expect(!exact.readsRows && exact.filter == nil)
            #expect(exact.description.contains("count from index"))

            request.predicate = P(value: false)
            #expect(try context.explain(request).access == FetchPlan.Access.none)
            #expect(try context.fetch(request).isEmpty)
            request.predicate = P(key: "rank", .greaterThan, nil)
            #expect(try context.explain(request).access == FetchPlan.Access.none)
            #expect(try context.count(for: request) == 0)
        }
        try container.close()
    }

    /// A walk that accepts few of the rows it reads (about one in forty) reads on past the keys it
    /// read from the index at first, as many times as it needs, and finds what the oracle finds.
    @Test func aWalkThatAcceptsFewRowsReadsMoreOfTheIndexUntilItHasThem() throws {
        let folder = TemporaryDirectory()
        let container = try CatalogModel.seeded(at: folder.store(), count: 1_200, batch: 100)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = P(andPredicateWithSubpredicates: [
                P(key: "label", .equalTo, "label 3"), P(key: "flag", .equalTo, false),
            ])
            request.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: false)]
            for limit in [1, 5, 25, 200] {
                request.fetchLimit = limit
                #expect(try context.explain(request).stopsAfter == limit, "limit \(limit): a walk of rank's index")
                let expected = try Self.oracle(request, in: context)
                #expect(expected.count == min(limit, 30), "limit \(limit): 30 items match")
                #expect(
                    CatalogModel.ranks(try context.fetch(request)) == CatalogModel.ranks(expected), "limit \(limit)")
            }
        }
    }

    /// W5's shape: a sort on the indexed key with a limit walks the index from the top and stops;
    /// the same predicate counted reads no rows when the index answers it.
    @Test func sortedLimitWalksTheIndexAndStopsEarly() throws {
        let folder = TemporaryDirectory()
        // Ranks grow with the saves: the top ranks sit in the last blocks.
        try CatalogModel.seeded(at: folder.store(), count: 1_200, batch: 40).close()
        let container = try GraphModel.container(at: folder.store(), model: CatalogModel.make())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let blocks = Self.engine(container).statistics.blocks
            #expect(blocks >= 30)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = P(andPredicateWithSubpredicates: [
                P(key: "rank", .greaterThan, 100), P(key: "flag", .equalTo, true),
            ])
            request.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: false)]
            request.fetchLimit = 10
            var before = Self.blockReads(container)
            let top = try context.fetch(request)
            let walked = Self.blockReads(container) - before
            #expect(CatalogModel.ranks(top) == [1199, 1198, 1196, 1195, 1193, 1192, 1190, 1189, 1187, 1186])
            #expect(walked <= 4, "the walk reads the last blocks only, not \(walked) of \(blocks)")

            let count = FetchRequest<ManagedObject>(entityName: "Item")
            count.predicate = P(key: "rank", .greaterThan, 100)
            before = Self.blockReads(container)
            #expect(try context.count(for: count) == 1_099)
            #expect(Self.blockReads(container) == before, "a count answered by the index reads no block")
            count.predicate = P(andPredicateWithSubpredicates: [
                P(key: "rank", .greaterThan, 100), P(key: "rank", .lessThan, 1_000),
            ])
            #expect(try context.count(for: count) == 899)
            #expect(Self.blockReads(container) == before, "an intersection of indexes reads no block either")
            count.includesSubentities = false
            #expect(try context.count(for: count) == 899 - 90, "SpecialItems are told apart by their rows")

            // With unsaved changes the walk still merges them in.
            let inserted = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            inserted.setValue(Int64(5_000), forKey: "rank")
            inserted.setValue(true, forKey: "flag")
            let lowered = try #require(top.first)
            lowered.setValue(Int64(150), forKey: "rank")
            context.delete(top[1])
            let merged = try context.fetch(request)
            #expect(merged.map(\.objectID) == (try Self.oracle(request, in: context)).map(\.objectID))
            #expect(CatalogModel.ranks(merged) == [5000, 1196, 1195, 1193, 1192, 1190, 1189, 1187, 1186, 1184])
            request.fetchOffset = 3
            #expect(
                try context.fetch(request).map(\.objectID) == (try Self.oracle(request, in: context)).map(\.objectID))
            #expect(try context.count(for: count) == 899 - 90, "the changed item is a SpecialItem")
            count.includesSubentities = true
            #expect(try context.count(for: count) == 900, "the item moved below 1000 is counted")
        }
        try container.close()
    }

    /// Walks over an index whose values repeat: rows tied on the sort key are ordered by the
    /// next descriptor, and nil values come first ascending.
    @Test func walksHandleTiesAndNils() throws {
        let folder = TemporaryDirectory()
        let container = try CatalogModel.seeded(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                let rank = item.value(forKey: "rank") as! Int64
                item.setValue(rank % 4 == 0 ? nil : Double(rank % 3), forKey: "score")
            }
            try context.save()
            for ascending in [true, false] {
                for (limit, offset) in [(5, 0), (7, 3), (200, 390), (1, 599)] {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.sortDescriptors = [
                        FetchSortDescriptor(key: "score", ascending: ascending),
                        FetchSortDescriptor(key: "code", ascending: false),
                    ]
                    request.fetchLimit = limit
                    request.fetchOffset = offset
                    if case .orderedIndex = try context.explain(request).access {
                    } else {
                        Issue.record("no walk: \(try context.explain(request))")
                    }
                    #expect(
                        try context.fetch(request).map(\.objectID)
                            == (try Self.oracle(request, in: context)).map(\.objectID),
                        "\(ascending) \(limit) \(offset)")
                }
            }
        }
        try container.close()
    }

    @Test func pendingChangesMergeIntoIndexPlans() throws {
        let folder = TemporaryDirectory()
        let container = try CatalogModel.seeded(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let low = FetchRequest<ManagedObject>(entityName: "Item")
            low.predicate = P(key: "rank", .lessThan, 10)
            low.sortDescriptors = [FetchSortDescriptor(key: "rank")]
            let stored = try context.fetch(low)
            stored[5].setValue(Int64(700), forKey: "rank")
            context.delete(stored[7])
            let fresh = EntityDescription.insertNewObject(forEntityName: "SpecialItem", into: context)
            fresh.setValue(Int64(3), forKey: "rank")
            stored[2].setValue("changed", forKey: "label")
            for pending in [true, false] {
                low.includesPendingChanges = pending
                let expected: [Int64] = pending ? [0, 1, 2, 3, 3, 4, 6, 8, 9] : [0, 1, 2, 3, 4, 700, 6, 7, 8, 9]
                #expect(
                    CatalogModel.ranks(try context.fetch(low)) == expected,
                    "pending \(pending): stored rows matched on the store, returned as they are in memory")
                #expect(try context.count(for: low) == expected.count)
                #expect(try context.explainCount(for: low).mergesPendingChanges == pending)
            }
        }
        try container.close()
    }
}
