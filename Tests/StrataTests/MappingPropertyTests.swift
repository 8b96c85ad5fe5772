import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Random models (inheritance, same names in siblings and unrelated entities, relationships of
/// every shape with and without inverses) filled with random objects, saved, reopened and read
/// back through fetches and through faults; then changed (values, relationships, deletions),
/// saved and read back again. Every attribute and relationship must come back as it was saved.
///
/// `STRATA_MAPPING_SEED` replays one model; `STRATA_MAPPING_CASES` sets how many models (default 40).
@Suite struct MappingPropertyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let cases = environment["STRATA_MAPPING_CASES"].flatMap(Int.init) ?? 40

    @Test func randomModelsRoundTripEveryPropertyThroughSaveReopenAndFaults() throws {
        let seeds =
            Self.environment["STRATA_MAPPING_SEED"].flatMap(UInt64.init).map { [$0] }
            ?? (0..<UInt64(Self.cases)).map { 7_000 + $0 }
        for seed in seeds {
            let failures = try Self.roundTrip(seed: seed)
            #expect(failures.isEmpty, "STRATA_MAPPING_SEED=\(seed)\n\(failures.joined(separator: "\n"))")
            if !failures.isEmpty { break }
        }
    }

    /// Runs one model; returns what went wrong, with the model (empty when nothing did).
    static func roundTrip(seed: UInt64) throws -> [String] {
        var random = SplitMix64(seed: seed)
        let graph = RandomGraphModel(random: &random)
        let folder = TemporaryDirectory()
        var failures: [String] = []
        func check(_ stage: String, expected: [Int64: [String: String]], actual: [Int64: [String: String]]) {
            let differences = RandomGraphModel.differences(expected: expected, actual: actual)
            if !differences.isEmpty { failures += ["\(stage):"] + differences }
        }
        do {
            var expected = try withContext(graph, folder) { context in
                var objects: [ManagedObject] = []
                var uid: Int64 = 0
                for entity in graph.concreteEntities {
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        let object = ManagedObject(entity: entity, insertInto: context)
                        uid += 1
                        object.setValue(uid, forKey: "uid")
                        objects.append(object)
                    }
                }
                for object in objects {
                    for property in object.entity.properties {
                        try RandomGraphModel.assign(property, of: object, among: objects, random: &random)
                    }
                }
                try context.save()
                return try RandomGraphModel.snapshot(objects)
            }
            let uris = try withContext(graph, folder) { context in
                let objects = try fetchAll(graph, context)
                check("after reopening, fetched", expected: expected, actual: try RandomGraphModel.snapshot(objects))
                return objects.map { $0.objectID.uriRepresentation() }
            }
            expected = try withContext(graph, folder) { context in
                // Faults made from the URIs, fired one by one; then random changes.
                let objects = try uris.map { uri in
                    let id = try #require(
                        context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri))
                    return context.object(with: id)
                }
                check("after reopening, faulted", expected: expected, actual: try RandomGraphModel.snapshot(objects))
                let keep = objects.filter { object in
                    !graph.referencedWithoutInverse.contains { object.entity.isKindOf(entity: $0) }
                }
                if let doomed = keep.randomElement(using: &random), Bool.random(using: &random) {
                    context.delete(doomed)
                }
                for object in objects.shuffled(using: &random).prefix(4) where !object.isDeleted {
                    let property = object.entity.properties.randomElement(using: &random)!
                    try RandomGraphModel.assign(
                        property, of: object, among: objects.filter { !$0.isDeleted }, random: &random)
                }
                let survivors = objects.filter { !$0.isDeleted }
                try context.save()
                return try RandomGraphModel.snapshot(survivors)
            }
            try withContext(graph, folder) { context in
                check(
                    "after changing, saving and reopening", expected: expected,
                    actual: try RandomGraphModel.snapshot(try fetchAll(graph, context)))
            }
        } catch {
            failures.append("error: \(error)")
        }
        return failures.isEmpty ? [] : failures + ["model:", graph.description]
    }

    /// The objects of every root entity (sub-entities included).
    static func fetchAll(_ graph: RandomGraphModel, _ context: ManagedObjectContext) throws -> [ManagedObject] {
        try graph.entities.filter { $0.superentity == nil }.flatMap { root in
            try context.fetch(FetchRequest<ManagedObject>(entityName: root.name!))
        }
    }

    /// Runs `body` on a new context of a container on the model's store, then closes it.
    static func withContext<T>(
        _ graph: RandomGraphModel, _ folder: TemporaryDirectory, _ body: (ManagedObjectContext) throws -> T
    ) throws -> T {
        try RelationshipTests.withContext(at: folder.store(), model: graph.model, body)
    }
}
