import Foundation
import StrataTestSupport
import Testing
@testable import Strata

final class ConstrainedEvent: ManagedObject {
    @Managed var at: Date
    @Managed var payload: Data
}

/// Uniqueness-constraint conflicts under each merge policy: with a stored object (an upsert)
/// and between objects inserted in one save; a custom policy; typed comparison of values.
@Suite struct ConstraintMergePolicyTests {
    /// A new Ada (name "Ada L.", notes "new", on a new team Labs, score not set) is saved
    /// over the stored Ada (name "Ada", score 1, on Core) under `policy`.
    @Test(arguments: [
        (MergePolicyType.errorMergePolicyType, nil as MergeModel.Snapshot?),
        (
            .mergeByPropertyObjectTrumpMergePolicyType,
            MergeModel.Snapshot(name: "Ada L.", score: 1, notes: "new", team: "Labs")
        ),
        (
            .mergeByPropertyStoreTrumpMergePolicyType,
            MergeModel.Snapshot(name: "Ada", score: 1, notes: "new", team: "Core")
        ),
        (.overwriteMergePolicyType, MergeModel.Snapshot(name: "Ada L.", score: 0, notes: "new", team: "Labs")),
        (.rollbackMergePolicyType, MergeModel.Snapshot(name: "Ada", score: 1, notes: nil, team: "Core")),
    ])
    func insertedObjectMergesIntoTheStoredOne(policy: MergePolicyType, expected: MergeModel.Snapshot?) throws {
        let folder = TemporaryDirectory()
        do {
            let container = try MergeModel.seeded(in: folder)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                context.mergePolicy = MergePolicy(merge: policy)
                let labs = MergeTeam(context: context)
                labs.name = "Labs"
                let ada = MergeMember(context: context)
                ada.email = "ada@example.com"
                ada.name = "Ada L."
                ada.notes = "new"
                ada.team = labs
                if policy == .errorMergePolicyType {
                    let error = #expect(throws: CoreDataError.self) { try context.save() }
                    #expect(error?.code == .managedObjectConstraintMerge)
                    #expect(error?.detailedErrors.map(\.objectID) == [ada.objectID])
                    #expect(context.insertedObjects == [labs, ada], "the failed save keeps the changes")
                    return
                }
                try context.save()
                #expect(!context.hasChanges)
                #expect(ada.managedObjectContext == nil, "the inserted duplicate is merged away")
                #expect(
                    labs.members.count
                        == ((policy == .overwriteMergePolicyType
                            || policy == .mergeByPropertyObjectTrumpMergePolicyType) ? 1 : 0))
                #expect(!labs.members.contains(ada))
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store("Members"), model: MergeModel.make())
        defer { try? container.close() }
        let members = try MergeModel.members(in: container)
        #expect(members.count == 1)
        #expect(
            members["ada@example.com"]
                == (expected ?? MergeModel.Snapshot(name: "Ada", score: 1, notes: nil, team: "Core")))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let teams = try context.fetch(FetchRequest<MergeTeam>(entityName: "MergeTeam"))
            let byName = Dictionary(uniqueKeysWithValues: teams.map { ($0.name, $0.members.map(\.email).sorted()) })
            let onLabs = expected?.team == "Labs"
            #expect(byName["Core"] == (onLabs ? [] : ["ada@example.com"]))
            if policy != .errorMergePolicyType {
                #expect(
                    byName["Labs"] == (onLabs ? ["ada@example.com"] : []),
                    "the new team is saved, holding no deleted duplicate")
            }
        }
    }

    /// Two objects inserted in one save with the same email: the first is kept.
    @Test(arguments: [
        (MergePolicyType.errorMergePolicyType, nil as MergeModel.Snapshot?),
        (
            .mergeByPropertyObjectTrumpMergePolicyType,
            MergeModel.Snapshot(name: "second", score: 5, notes: "n2", team: nil)
        ),
        (
            .mergeByPropertyStoreTrumpMergePolicyType,
            MergeModel.Snapshot(name: "first", score: 5, notes: "n2", team: nil)
        ),
        (.overwriteMergePolicyType, MergeModel.Snapshot(name: "second", score: 0, notes: "n2", team: nil)),
        (.rollbackMergePolicyType, MergeModel.Snapshot(name: "first", score: 5, notes: nil, team: nil)),
    ])
    func objectsInsertedTogetherMergeIntoOne(policy: MergePolicyType, expected: MergeModel.Snapshot?) throws {
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.mergePolicy = MergePolicy(merge: policy)
            let first = MergeMember(context: context)
            first.email = "grace@example.com"
            first.name = "first"
            first.score = 5
            let second = MergeMember(context: context)
            second.email = "grace@example.com"
            second.name = "second"
            second.notes = "n2"
            if policy == .errorMergePolicyType {
                let error = #expect(throws: CoreDataError.self) { try context.save() }
                #expect(error?.code == .managedObjectConstraintMerge)
                #expect(error?.detailedErrors.map(\.objectID) == [second.objectID])
                return
            }
            try context.save()
            #expect(first.managedObjectContext === context && !first.objectID.isTemporaryID)
            #expect(second.managedObjectContext == nil)
        }
        let members = try MergeModel.members(in: container)
        #expect(members.count == (policy == .errorMergePolicyType ? 1 : 2))
        #expect(members["grace@example.com"] == expected)
    }

    /// A subclass resolves constraint conflicts its own way: keep the stored object with the
    /// highest score and delete the duplicates.
    @Test func customPolicyResolvesConstraintConflicts() throws {
        final class HighestScoreWins: MergePolicy {
            let conflicts = Locked<[String]>([])
            init() { super.init(merge: .errorMergePolicyType) }
            override func resolve(constraintConflicts list: [ConstraintConflict]) throws {
                for conflict in list {
                    guard let kept = conflict.databaseObject as? MergeMember else { continue }
                    let stored = conflict.databaseSnapshot?["score"] as? Int64 ?? -1
                    conflicts.withLock {
                        $0.append(
                            "\(conflict.constraint) \(conflict.constraintValues["email"] ?? "?") stored \(stored) x\(conflict.conflictingObjects.count)"
                        )
                    }
                    for case let duplicate as MergeMember in conflict.conflictingObjects {
                        kept.score = max(kept.score, duplicate.score)
                        duplicate.managedObjectContext?.delete(duplicate)
                    }
                }
            }
        }
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let policy = HighestScoreWins()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.mergePolicy = policy
            for score in [4, 9, 2] as [Int64] {
                let ada = MergeMember(context: context)
                ada.email = "ada@example.com"
                ada.score = score
            }
            try context.save()
        }
        #expect(policy.conflicts.current == ["[\"email\"] ada@example.com stored 1 x3"])
        #expect(
            try MergeModel.members(in: container)["ada@example.com"]
                == MergeModel.Snapshot(name: "Ada", score: 9, notes: nil, team: "Core"))
    }

    /// A policy that leaves a conflict unresolved fails the save and loses nothing.
    @Test func unresolvedConflictFailsTheSave() throws {
        final class DoesNothing: MergePolicy {
            init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
            override func resolve(constraintConflicts list: [ConstraintConflict]) throws {}
        }
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.performAndWait {
            context.mergePolicy = DoesNothing()
            let ada = MergeMember(context: context)
            ada.email = "ada@example.com"
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectConstraintMerge)
            #expect(context.insertedObjects == [ada])
        }
        #expect(
            try MergeModel.members(in: container)["ada@example.com"]
                == MergeModel.Snapshot(name: "Ada", score: 1, notes: nil, team: "Core"))
    }

    /// Constrained values compare as the store does: dates to the fraction of a second, data by
    /// content.
    @Test func constrainedValuesCompareExactly() throws {
        let event = ModelBuilder.entity(
            "ConstrainedEvent",
            [
                ModelBuilder.attribute("at", .date, isOptional: false),
                ModelBuilder.attribute("payload", .binaryData, isOptional: false),
            ], className: String(reflecting: ConstrainedEvent.self))
        event.uniquenessConstraints = [["at", "payload"]]
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store("Events"), model: ModelBuilder.model([event]))
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        try context.performAndWait {
            let values: [(Date, Data)] = [
                (start, Data([1, 2])), (start.addingTimeInterval(0.25), Data([1, 2])), (start, Data([2, 1])),
            ]
            for (date, data) in values {
                let object = ConstrainedEvent(context: context)
                object.at = date
                object.payload = data
            }
            try context.save()
            let saved = try context.count(for: FetchRequest<ManagedObject>(entityName: "ConstrainedEvent"))
            #expect(saved == 3, "dates a quarter second apart and data of one length differ")

            let duplicate = ConstrainedEvent(context: context)
            duplicate.at = start.addingTimeInterval(0.25)
            duplicate.payload = Data([1, 2])
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectConstraintMerge)
        }
    }
}

extension ConstraintMergePolicyTests {
    /// A stored object changed onto another stored object's values is not merged away under
    /// any policy: the save fails and both rows stay as they were.
    @Test(arguments: [
        MergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType, .rollbackMergePolicyType,
    ])
    func storedObjectChangedOntoTakenValuesFails(policy: MergePolicyType) throws {
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let grace = MergeMember(context: context)
            grace.email = "grace@example.com"
            try context.save()
            context.mergePolicy = MergePolicy(merge: policy)
            grace.email = "ada@example.com"
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectConstraintMerge)
            #expect(error?.objectID == grace.objectID)
        }
        let members = try MergeModel.members(in: container)
        #expect(members.keys.sorted() == ["ada@example.com", "grace@example.com"])
        #expect(members["ada@example.com"]?.name == "Ada")
    }
}

class MergePerson: ManagedObject {
    @Managed var email: String
    @Managed var name: String?
}

final class MergeStaff: MergePerson {
    @Managed var desk: String?
}

extension ConstraintMergePolicyTests {
    /// A constraint of a superentity spans its subentities: a new Person with a stored Staff
    /// member's email updates that Staff row, keeping what only Staff has.
    @Test func upsertAcrossAnEntityHierarchy() throws {
        let person = ModelBuilder.entity(
            "MergePerson",
            [
                ModelBuilder.attribute("email", .string, isOptional: false), ModelBuilder.attribute("name", .string),
            ], className: String(reflecting: MergePerson.self))
        person.uniquenessConstraints = [["email"]]
        let staff = ModelBuilder.entity(
            "MergeStaff", [ModelBuilder.attribute("desk", .string)], className: String(reflecting: MergeStaff.self))
        person.subentities = [staff]
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(
            at: folder.store("People"), model: ModelBuilder.model([person, staff]))
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let stored = MergeStaff(context: context)
            stored.email = "lin@example.com"
            stored.name = "Old"
            stored.desk = "D1"
            try context.save()
            context.reset()

            context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
            let update = MergePerson(context: context)
            update.email = "lin@example.com"
            update.name = "New"
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let people = try reader.fetch(FetchRequest<MergePerson>(entityName: "MergePerson"))
            #expect(people.count == 1)
            let lin = try #require(people.first as? MergeStaff)
            #expect(lin.name == "New")
            #expect(lin.desk == "D1")
        }
    }
}
