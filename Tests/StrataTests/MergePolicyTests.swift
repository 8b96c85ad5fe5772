import Foundation
import StrataTestSupport
import Testing
@testable import Strata

final class MergeMember: ManagedObject {
    @Managed var email: String
    @Managed var name: String?
    @Managed var score: Int64
    @Managed var notes: String?
    @Managed var team: MergeTeam?
}

final class MergeTeam: ManagedObject {
    @Managed var name: String
    @Managed var members: Set<MergeMember>
}

/// Members with a unique email on teams, shared by the merge policy tests.
enum MergeModel {
    static func make() -> ManagedObjectModel {
        let member = ModelBuilder.entity(
            "MergeMember",
            [
                ModelBuilder.attribute("email", .string, isOptional: false),
                ModelBuilder.attribute("name", .string),
                ModelBuilder.attribute("score", .integer64, defaultValue: Int64(0)),
                ModelBuilder.attribute("notes", .string),
            ], className: String(reflecting: MergeMember.self))
        member.uniquenessConstraints = [["email"]]
        let team = ModelBuilder.entity(
            "MergeTeam", [ModelBuilder.attribute("name", .string, isOptional: false)],
            className: String(reflecting: MergeTeam.self))
        let members = ModelBuilder.relationship("members", from: team, to: member, toMany: true)
        let memberTeam = ModelBuilder.relationship("team", from: member, to: team)
        ModelBuilder.inverse(members, memberTeam)
        return ModelBuilder.model([member, team])
    }

    /// A store holding Ada (score 1, on the team Core) and its container.
    static func seeded(in folder: TemporaryDirectory) throws -> PersistentContainer {
        let container = try GraphModel.container(at: folder.store("Members"), model: make())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let core = MergeTeam(context: context)
            core.name = "Core"
            let ada = MergeMember(context: context)
            ada.email = "ada@example.com"
            ada.name = "Ada"
            ada.score = 1
            ada.team = core
            try context.save()
        }
        return container
    }

    /// Every member as (email, name, score, notes, team name), read by a new context.
    static func members(in container: PersistentContainer) throws -> [String: Snapshot] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var result: [String: Snapshot] = [:]
            for member in try context.fetch(FetchRequest<MergeMember>(entityName: "MergeMember")) {
                #expect(result[member.email] == nil, "one row per email")
                result[member.email] = Snapshot(
                    name: member.name, score: member.score, notes: member.notes, team: member.team?.name)
            }
            return result
        }
    }

    struct Snapshot: Equatable, Sendable {
        var name: String?
        var score: Int64
        var notes: String?
        var team: String?
    }
}

/// The merge policy classes and spellings, and optimistic-locking conflicts under each policy.
@Suite struct MergePolicyTests {
    @Test func coreDataSpellingsCompileAndMeanThePolicies() {
        let context = ManagedObjectContext(.privateQueue)
        #expect(context.mergePolicy == ErrorMergePolicy)
        context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        #expect(context.mergePolicy.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
        context.mergePolicy = MergePolicy.mergeByPropertyStoreTrump
        #expect(context.mergePolicy.mergeType == .mergeByPropertyStoreTrumpMergePolicyType)
        context.mergePolicy = MergePolicy(merge: .overwriteMergePolicyType)
        #expect(context.mergePolicy == OverwriteMergePolicy)
        #expect(context.mergePolicy !== OverwriteMergePolicy)
        context.mergePolicy = RollbackMergePolicy
        #expect(context.mergePolicy == .rollback)
        #expect(MergeByPropertyStoreTrumpMergePolicy.mergeType == .mergeByPropertyStoreTrumpMergePolicyType)
        #expect(
            MergePolicyType.errorMergePolicyType.rawValue == 0 && MergePolicyType.rollbackMergePolicyType.rawValue == 4)
        #expect(MergePolicy(merge: .errorMergePolicyType) != MergePolicy.overwrite)
    }

    /// Context A read Ada, context B renamed her and saved, then A changes her score and (for
    /// some policies) her name, and saves under `policy`.
    @Test(arguments: [
        (MergePolicyType.errorMergePolicyType, nil as MergeModel.Snapshot?),
        (
            .mergeByPropertyObjectTrumpMergePolicyType,
            MergeModel.Snapshot(name: "Ada A", score: 7, notes: "from B", team: "Core")
        ),
        (
            .mergeByPropertyStoreTrumpMergePolicyType,
            MergeModel.Snapshot(name: "Ada B", score: 7, notes: "from B", team: "Core")
        ),
        (.overwriteMergePolicyType, MergeModel.Snapshot(name: "Ada A", score: 7, notes: nil, team: "Core")),
        (.rollbackMergePolicyType, MergeModel.Snapshot(name: "Ada B", score: 1, notes: "from B", team: "Core")),
    ])
    func optimisticLockingConflictsFollowThePolicy(policy: MergePolicyType, expected: MergeModel.Snapshot?) throws {
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let request = FetchRequest<MergeMember>(entityName: "MergeMember")
        let adaA = try first.performAndWait { try #require(try first.fetch(request).first) }
        let adaB = try second.performAndWait { try #require(try second.fetch(request).first) }
        try second.performAndWait {
            adaB.name = "Ada B"
            adaB.notes = "from B"
            try second.save()
        }
        try first.performAndWait {
            first.mergePolicy = MergePolicy(merge: policy)
            adaA.name = "Ada A"
            adaA.score = 7
            if policy == .errorMergePolicyType {
                let error = #expect(throws: CoreDataError.self) { try first.save() }
                #expect(error?.code == .managedObjectMerge)
                #expect(error?.detailedErrors.map(\.objectID) == [adaA.objectID])
                #expect(first.hasChanges, "the failed save keeps the changes")
            } else {
                try first.save()
            }
        }
        let members = try MergeModel.members(in: container)
        #expect(
            members["ada@example.com"]
                == (expected ?? MergeModel.Snapshot(name: "Ada B", score: 1, notes: "from B", team: "Core")))
    }

    /// A subclass sees each conflict with its snapshots, then lets its policy resolve them.
    @Test func customPolicySeesOptimisticLockingConflicts() throws {
        final class RecordingPolicy: MergePolicy {
            let seen = Locked<[String]>([])
            init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
            override func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
                for conflict in list {
                    let cached = conflict.cachedSnapshot?["name"] as? String ?? "?"
                    let persisted = conflict.persistedSnapshot?["name"] as? String ?? "?"
                    let current = conflict.objectSnapshot?["name"] as? String ?? "?"
                    seen.withLock {
                        $0.append(
                            "\(cached)->\(persisted) vs \(current), v\(conflict.oldVersionNumber < conflict.newVersionNumber)"
                        )
                    }
                }
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let folder = TemporaryDirectory()
        let container = try MergeModel.seeded(in: folder)
        defer { try? container.close() }
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let request = FetchRequest<MergeMember>(entityName: "MergeMember")
        let adaA = try first.performAndWait { try #require(try first.fetch(request).first) }
        let adaB = try second.performAndWait { try #require(try second.fetch(request).first) }
        try second.performAndWait {
            adaB.name = "Ada B"
            try second.save()
        }
        let policy = RecordingPolicy()
        try first.performAndWait {
            first.mergePolicy = policy
            adaA.score = 9
            try first.save()
        }
        #expect(policy.seen.current == ["Ada->Ada B vs Ada, vtrue"])
        #expect(
            try MergeModel.members(in: container)["ada@example.com"]
                == MergeModel.Snapshot(name: "Ada B", score: 9, notes: nil, team: "Core"))
    }
}
