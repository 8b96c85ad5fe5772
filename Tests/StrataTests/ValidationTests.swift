import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// An object that adds its own rules: `code` must be upper case, and `start` not after `end`.
final class CheckedObject: ManagedObject {
    @Managed var code: String?
    @Managed var start: Int64
    @Managed var end: Int64
    var insertValidations = 0

    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
        if key == "code", let code = value as? String, code != code.uppercased() {
            throw CoreDataError(.managedObjectValidation, "code must be upper case", objectID: objectID, key: key)
        }
    }

    override func validateForInsert() throws {
        insertValidations += 1
        var errors: [CoreDataError] = []
        do {
            try super.validateForInsert()
        } catch let error as CoreDataError {
            errors += error.code == .validationMultipleErrors ? error.detailedErrors : [error]
        }
        if start > end {
            errors.append(
                CoreDataError(.managedObjectValidation, "start is after end", objectID: objectID, key: "start"))
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw CoreDataError(.validationMultipleErrors, "\(errors.count) errors", detailedErrors: errors)
        }
    }
}

/// The model's validation rules, and what a failed save leaves behind.
@Suite struct ValidationTests {
    static let earliest = Date(timeIntervalSinceReferenceDate: 0)
    static let latest = Date(timeIntervalSinceReferenceDate: 1_000_000_000)

    static func model() -> ManagedObjectModel {
        let name = ModelBuilder.attribute("name", .string, isOptional: false)
        name.minValue = 2
        name.maxValue = 10
        name.regularExpressionString = "[a-z]+"
        let age = ModelBuilder.attribute("age", .integer16)
        age.minValue = Int16(0)
        age.maxValue = Int16(150)
        let score = ModelBuilder.attribute("score", .double)
        score.minValue = 0.0
        score.maxValue = 1.0
        let joined = ModelBuilder.attribute("joined", .date)
        joined.minValue = earliest
        joined.maxValue = latest
        let account = ModelBuilder.entity("Account", [name, age, score, joined])
        let team = ModelBuilder.entity("Team", [ModelBuilder.attribute("title", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship(
                "members", from: team, to: account, toMany: true, minCount: 2, maxCount: 3, isOptional: false),
            ModelBuilder.relationship("team", from: account, to: team))
        let checked = ModelBuilder.entity(
            "Checked",
            [
                ModelBuilder.attribute("code", .string),
                ModelBuilder.attribute("start", .integer64, defaultValue: Int64(0)),
                ModelBuilder.attribute("end", .integer64, defaultValue: Int64(0)),
            ], className: "CheckedObject")
        CheckedObject.register(for: "Checked")
        return ModelBuilder.model([account, team, checked])
    }

    /// A new account named `name`.
    static func account(_ name: String?, in context: ManagedObjectContext) throws -> ManagedObject {
        let account = EntityDescription.insertNewObject(forEntityName: "Account", into: context)
        account.setValue(name, forKey: "name")
        return account
    }

    /// The error `body` throws, which must be a ``CoreDataError``.
    static func failure(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> CoreDataError?
    {
        #expect(throws: CoreDataError.self, sourceLocation: sourceLocation) { try body() }
    }

    /// The code `validateValue(_:forKey:)` throws for `value`, or `nil` when it is valid.
    static func code(validating value: Any?, forKey key: String, of object: ManagedObject) -> CoreDataError.Code? {
        var value = value
        do {
            try object.validateValue(&value, forKey: key)
            return nil
        } catch let error as CoreDataError {
            #expect(error.key == key)
            #expect(error.objectID == object.objectID)
            return error.code
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func validateValueChecksEachRule() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let account = try Self.account("ann", in: context)
            func check(_ value: Any?, _ key: String) -> CoreDataError.Code? {
                Self.code(validating: value, forKey: key, of: account)
            }
            #expect(check(nil, "name") == .validationMissingMandatoryProperty)
            #expect(check("a", "name") == .validationStringTooShort)
            #expect(check("abcdefghijk", "name") == .validationStringTooLong)
            #expect(check("Ann", "name") == .validationStringPatternMatching)
            #expect(check("ann1", "name") == .validationStringPatternMatching)
            #expect(check("ann", "name") == nil)
            #expect(check(Int16(-1), "age") == .validationNumberTooSmall)
            #expect(check(Int16(151), "age") == .validationNumberTooLarge)
            #expect(check(Int16(150), "age") == nil)
            #expect(check(nil, "age") == nil, "optional")
            #expect(check(1.5, "score") == .validationNumberTooLarge)
            #expect(check(-0.1, "score") == .validationNumberTooSmall)
            #expect(check(Self.earliest.addingTimeInterval(-1), "joined") == .validationDateTooSoon)
            #expect(check(Self.latest.addingTimeInterval(1), "joined") == .validationDateTooLate)
            #expect(check(Self.latest, "joined") == nil)

            let team = EntityDescription.insertNewObject(forEntityName: "Team", into: context)
            let others = try (0..<4).map { try Self.account("m\(String(repeating: "x", count: $0 + 1))", in: context) }
            func checkTeam(_ value: Any?) -> CoreDataError.Code? {
                Self.code(validating: value, forKey: "members", of: team)
            }
            #expect(checkTeam(Set<ManagedObject>()) == .validationRelationshipLacksMinimumCount, "not optional")
            #expect(checkTeam(Set([others[0]])) == .validationRelationshipLacksMinimumCount)
            #expect(checkTeam(Set(others[0..<2])) == nil)
            #expect(checkTeam(Set(others[0..<3])) == nil)
            #expect(checkTeam(Set(others)) == .validationRelationshipExceedsMaximumCount)
            let unknown = Self.failure {
                var value: Any? = 1
                try account.validateValue(&value, forKey: "nickname")
            }
            #expect(unknown?.code == .keyValueValidation)
        }
    }

    @Test func saveReportsEachRuleItBreaks() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let cases: [(key: String, value: Any?, code: CoreDataError.Code)] = [
                ("name", nil, .validationMissingMandatoryProperty),
                ("name", "x", .validationStringTooShort),
                ("name", "abcdefghijk", .validationStringTooLong),
                ("name", "NOPE", .validationStringPatternMatching),
                ("age", -3, .validationNumberTooSmall),
                ("age", 200, .validationNumberTooLarge),
                ("score", 2.0, .validationNumberTooLarge),
                ("joined", Self.latest.addingTimeInterval(60), .validationDateTooLate),
            ]
            for (key, value, code) in cases {
                let account = try Self.account("valid", in: context)
                account.setValue(value, forKey: key)
                let error = Self.failure { try context.save() }
                #expect(error?.code == code, "\(key) = \(String(describing: value))")
                #expect(error?.key == key)
                #expect(error?.objectID == account.objectID)
                context.delete(account)
            }
            let team = EntityDescription.insertNewObject(forEntityName: "Team", into: context)
            let error = Self.failure { try context.save() }
            #expect(error?.code == .validationRelationshipLacksMinimumCount)
            #expect(error?.key == "members")
            let members = try (0..<4).map { try Self.account("m\(String(repeating: "x", count: $0 + 1))", in: context) }
            team.setValue(Set(members), forKey: "members")
            #expect(Self.failure { try context.save() }?.code == .validationRelationshipExceedsMaximumCount)
            team.mutableSetValue(forKey: "members").remove(members[3])
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let counts = try reader.performAndWait {
            (
                try reader.count(for: FetchRequest<ManagedObject>(entityName: "Account")),
                try reader.count(for: FetchRequest<ManagedObject>(entityName: "Team"))
            )
        }
        #expect(counts == (4, 1))
    }

    /// Several objects failing at once: one `validationMultipleErrors` error listing each
    /// failure; the context keeps its changes, nothing is stored, and a fixed save succeeds.
    @Test func severalFailuresAreReportedTogetherAndTheContextKeepsItsChanges() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let first = try Self.account("a", in: context)
                first.setValue(200, forKey: "age")
                let second = try Self.account(nil, in: context)
                second.setValue(0.5, forKey: "score")
                let fine = try Self.account("fine", in: context)

                let error = try #require(Self.failure { try context.save() })
                #expect(error.code == .validationMultipleErrors)
                let failures = Set(
                    error.detailedErrors.map {
                        "\($0.objectID?.uriRepresentation().absoluteString ?? "?") \($0.key ?? "?") \($0.code)"
                    })
                func failure(_ object: ManagedObject, _ key: String, _ code: CoreDataError.Code) -> String {
                    "\(object.objectID.uriRepresentation().absoluteString) \(key) \(code)"
                }
                #expect(
                    failures == [
                        failure(first, "name", .validationStringTooShort),
                        failure(first, "age", .validationNumberTooLarge),
                        failure(second, "name", .validationMissingMandatoryProperty),
                    ])
                #expect(error.detailedErrors.count == 3)
                #expect(error.description.contains("name"))

                #expect(context.hasChanges)
                #expect(context.insertedObjects == [first, second, fine])
                #expect(first.value(forKey: "age") as? Int16 == 200)
                #expect(second.value(forKey: "score") as? Double == 0.5)
                #expect([first, second, fine].allSatisfy { $0.objectID.isTemporaryID && $0.isInserted })
                let reader = container.newBackgroundContext()
                let stored = try reader.performAndWait {
                    try reader.count(for: FetchRequest<ManagedObject>(entityName: "Account"))
                }
                #expect(stored == 0, "a failed save stores nothing")

                first.setValue("first", forKey: "name")
                first.setValue(40, forKey: "age")
                second.setValue("second", forKey: "name")
                try context.save()
                #expect(!context.hasChanges)

                // An update breaking a rule fails validateForUpdate the same way.
                fine.setValue(-1, forKey: "age")
                let update = Self.failure { try context.save() }
                #expect(update?.code == .validationNumberTooSmall)
                #expect(update?.objectID == fine.objectID)
                #expect(fine.isUpdated)
                fine.setValue(1, forKey: "age")
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Account")
            request.sortDescriptors = [FetchSortDescriptor(key: "name")]
            let accounts = try context.fetch(request)
            #expect(accounts.map { $0.value(forKey: "name") as? String } == ["fine", "first", "second"])
            #expect(accounts.map { $0.value(forKey: "age") as? Int16 } == [1, 40, nil])
        }
    }

    @Test func subclassesAddTheirOwnRules() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let checked = CheckedObject(context: context)
            checked.code = "lower"
            checked.start = 5
            checked.end = 1
            var code: Any? = "lower"
            #expect(Self.failure { try checked.validateValue(&code, forKey: "code") }?.code == .managedObjectValidation)

            let error = try #require(Self.failure { try context.save() })
            #expect(checked.insertValidations == 1)
            #expect(error.code == .validationMultipleErrors)
            #expect(Set(error.detailedErrors.compactMap(\.key)) == ["code", "start"])
            #expect(error.detailedErrors.allSatisfy { $0.objectID == checked.objectID })

            checked.code = "UPPER"
            let remaining = Self.failure { try context.save() }
            #expect(remaining?.code == .managedObjectValidation)
            #expect(remaining?.key == "start")
            checked.end = 10
            try context.save()
            #expect(checked.insertValidations == 3)

            // validateForUpdate runs the overridden validateValue too.
            checked.code = "again lower"
            #expect(Self.failure { try context.save() }?.key == "code")
            #expect(checked.insertValidations == 3, "an update is not validated for insert")
            context.rollback()
            #expect(checked.code == "UPPER")
        }
    }
}
