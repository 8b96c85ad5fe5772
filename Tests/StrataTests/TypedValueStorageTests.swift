import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A record with a typed property of every attribute type that keeps its Swift type as it is.
final class EveryTypeRecord: ManagedObject {
    @Managed var small: Int16
    @Managed var medium: Int32
    @Managed var large: Int64
    @Managed var ratio: Double
    @Managed var weight: Float
    @Managed var amount: Decimal
    @Managed var flag: Bool
    @Managed var title: String
    @Managed var when: Date
    @Managed var blob: Data
    @Managed var identifier: UUID
    @Managed var link: URL
    @Managed var note: String?
}

/// How typed properties, key-value coding and change tracking store values: a value of exactly
/// the attribute's type is kept as it is, any other is converted or rejected as before; changed
/// properties are tracked for entities of any width; all of it through a store and a reopen.
@Suite struct TypedValueStorageTests {
    static let names: [(String, AttributeDescription.AttributeType)] = [
        ("small", .integer16), ("medium", .integer32), ("large", .integer64), ("ratio", .double), ("weight", .float),
        ("amount", .decimal), ("flag", .boolean), ("title", .string), ("when", .date), ("blob", .binaryData),
        ("identifier", .uuid), ("link", .uri), ("note", .string),
    ]

    static func everyTypeModel() -> ManagedObjectModel {
        let attributes = names.map { ModelBuilder.attribute($0.0, $0.1, isOptional: $0.0 == "note") }
        attributes.first { $0.name == "large" }!.minValue = 0
        EveryTypeRecord.register(for: "Record")
        return ModelBuilder.model([ModelBuilder.entity("Record", attributes, className: "EveryTypeRecord")])
    }

    /// An entity of 70 Integer 64 attributes, `a0` to `a69`, all optional.
    static func wideModel() -> ManagedObjectModel {
        let attributes = (0..<70).map { ModelBuilder.attribute("a\($0)", .integer64) }
        return ModelBuilder.model([ModelBuilder.entity("Wide", attributes)])
    }

    /// Calls `body` with a new record inserted into a context of a fresh store, on the
    /// context's queue, then `then` with the store's container.
    static func withNewRecord(
        _ body: (EveryTypeRecord, ManagedObjectContext) throws -> Void,
        then: (PersistentContainer) throws -> Void = { _ in }
    ) throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: everyTypeModel())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try body(
                EveryTypeRecord(entity: container.managedObjectModel.entitiesByName["Record"]!, insertInto: context),
                context)
        }
        try then(container)
    }

    /// The validation shortcut reads a slot's type in place from its existential container
    /// (`ManagedObject.storedType(_:)`); it must be the type `type(of:)` gives, and `nil` for
    /// none, for every type a shortcut names. A value of another type then fails the save.
    @Test func theTypeASlotHoldsIsReadInPlace() throws {
        try Self.withNewRecord { record, context in
            record.small = 1
            record.medium = 2
            record.large = 3
            record.ratio = 0.5
            record.weight = 1.5
            record.amount = Decimal(7)
            record.flag = true
            record.title = "a title longer than fifteen bytes"
            record.when = Date(timeIntervalSince1970: 1)
            record.blob = Data([1, 2])
            record.identifier = UUID()
            record.link = URL(string: "https://example.com")!
            for slot in record.slots.indices {
                #expect(
                    record.storedType(slot) == record.slots[slot].map { ObjectIdentifier(type(of: $0)) }, "slot \(slot)"
                )
            }
            let note = try #require(record.runtime.slots["note"])
            #expect(record.slots[note] == nil && record.storedType(note) == nil)
            try context.save()
            // A value of another type than the attribute's keeps the full check, which refuses it.
            record.setPrimitiveValue(Int64(5), forKey: "title")
            #expect(throws: CoreDataError.self) { try context.save() }
        }
    }

    @Test func everyTypedValueRoundTripsWithItsTypeThroughAReopen() throws {
        let folder = TemporaryDirectory()
        let when = Date(timeIntervalSince1970: 1_700_000_000.25)
        let identifier = UUID()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.everyTypeModel())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let record = EveryTypeRecord(
                    entity: container.managedObjectModel.entitiesByName["Record"]!, insertInto: context)
                record.small = -7
                record.medium = 70_000
                record.large = 9_000_000_000
                record.ratio = 0.125
                record.weight = 2.5
                record.amount = Decimal(string: "12.34")!
                record.flag = true
                record.title = "Ünïcode title that is longer than fifteen bytes"
                record.when = when
                record.blob = Data([0, 1, 2, 255])
                record.identifier = identifier
                record.link = URL(string: "https://example.com/a?b=c")!
                record.note = "note"
                record.note = nil
                #expect(record.changedValues().count == Self.names.count)
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.everyTypeModel())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let records = try context.fetch(FetchRequest<EveryTypeRecord>(entityName: "Record"))
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.small == -7)
            #expect(record.medium == 70_000)
            #expect(record.large == 9_000_000_000)
            #expect(record.ratio == 0.125)
            #expect(record.weight == 2.5)
            #expect(record.amount == Decimal(string: "12.34")!)
            #expect(record.flag)
            #expect(record.title == "Ünïcode title that is longer than fifteen bytes")
            #expect(record.when == when)
            #expect(record.blob == Data([0, 1, 2, 255]))
            #expect(record.identifier == identifier)
            #expect(record.link == URL(string: "https://example.com/a?b=c")!)
            #expect(record.note == nil)
            // Key-value coding gives each attribute's own Swift type.
            #expect(record.value(forKey: "small") is Int16)
            #expect(record.value(forKey: "medium") is Int32)
            #expect(record.value(forKey: "large") is Int64)
            #expect(record.value(forKey: "weight") is Float)
        }
    }

    @Test func valuesOfOtherTypesAreStillConvertedOrRejected() throws {
        try Self.withNewRecord { record, context in
            record.setValue(3, forKey: "small")  // an Int, converted to Int16
            record.setValue(Int64(4), forKey: "ratio")  // converted to Double
            record.setValue(1, forKey: "flag")  // converted to Bool
            record.weight = 1
            record.amount = 1
            record.title = "t"
            record.when = Date()
            record.blob = Data()
            record.identifier = UUID()
            record.link = URL(string: "file:///x")!
            #expect(record.value(forKey: "small") as? Int16 == 3)
            #expect(record.value(forKey: "ratio") as? Double == 4)
            #expect(record.value(forKey: "flag") as? Bool == true)
            #expect(throws: CoreDataError.self) { try record.setValue("text", forCheckedKey: "large") }

            // A value of the wrong type set without checking, and one below the minimum, fail the save.
            record.setValue("text", forKey: "medium")
            record.large = -1
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .validationMultipleErrors)
            #expect(Set(error.detailedErrors.map(\.code)) == [.managedObjectValidation, .validationNumberTooSmall])
            #expect(record.isInserted)

            record.medium = 5
            record.large = 1
            try context.save()
        } then: { container in
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let record = try #require(try reader.fetch(FetchRequest<EveryTypeRecord>(entityName: "Record")).first)
                #expect(record.medium == 5)
                #expect(record.large == 1)
                #expect(record.small == 3)
            }
        }
    }

    @Test func changesToEveryPropertyOfAWideEntityAreTrackedAndSaved() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.wideModel())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let object = ManagedObject(
                    entity: container.managedObjectModel.entitiesByName["Wide"]!, insertInto: context)
                for index in 0..<70 { object.setValue(Int64(index), forKey: "a\(index)") }
                try context.save()
            }
            try container.close()
        }
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.wideModel())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let object = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
                #expect(!object.hasChanges)
                object.setValue(Int64(1000), forKey: "a68")
                object.setValue(Int64(2000), forKey: "a3")
                #expect(object.isUpdated)
                #expect(Set(object.changedValues().keys) == ["a3", "a68"])
                #expect(object.changedValues()["a68"] as? Int64 == 1000)
                try context.save()
                #expect(!object.hasChanges)
                #expect(object.changedValues().isEmpty)
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.wideModel())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
            let values: [Int64?] = (0..<70).map { object.value(forKey: "a\($0)") as? Int64 }
            var expected: [Int64?] = (0..<70).map { Int64($0) }
            expected[3] = 2000
            expected[68] = 1000
            #expect(values == expected)
        }
    }

    /// An entity of a to-one `early` (slot 0), 70 Integer 64 attributes and a to-one `late`
    /// (slot 71), both to `Tag`.
    static func wideModelWithReferences() -> ManagedObjectModel {
        let tag = ModelBuilder.entity("Tag", [ModelBuilder.attribute("label", .string)])
        let wide = ModelBuilder.entity("Wide")
        ModelBuilder.relationship("early", from: wide, to: tag)
        wide.properties += (0..<70).map { ModelBuilder.attribute("a\($0)", .integer64) }
        ModelBuilder.relationship("late", from: wide, to: tag)
        return ModelBuilder.model([wide, tag])
    }

    /// A fetched object holds its row and decodes slots as they are read, noting the to-one
    /// references it made in one word for slots 0-63; a to-one reference past slot 63 is decoded
    /// when the row is loaded. Both read the related object, the same one each time, and a
    /// change to either is saved.
    @Test func toOneReferencesOnEitherSideOfSlot64OfALazilyLoadedObjectRead() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.wideModelWithReferences())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let model = container.managedObjectModel
                let first = ManagedObject(entity: model.entitiesByName["Tag"]!, insertInto: context)
                first.setValue("first", forKey: "label")
                let second = ManagedObject(entity: model.entitiesByName["Tag"]!, insertInto: context)
                second.setValue("second", forKey: "label")
                let object = ManagedObject(entity: model.entitiesByName["Wide"]!, insertInto: context)
                for index in 0..<70 { object.setValue(Int64(index * 3), forKey: "a\(index)") }
                object.setValue(first, forKey: "early")
                object.setValue(second, forKey: "late")
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.wideModelWithReferences())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
            #expect(object.runtime.slots["early"] == 0 && object.runtime.slots["late"] == 71)
            #expect(object.lazyRow != nil, "a fetched object holds its row")
            let late = try #require(object.value(forKey: "late") as? ManagedObject)
            let early = try #require(object.value(forKey: "early") as? ManagedObject)
            #expect(late.value(forKey: "label") as? String == "second")
            #expect(early.value(forKey: "label") as? String == "first")
            #expect(
                object.value(forKey: "late") as? ManagedObject === late
                    && object.value(forKey: "early") as? ManagedObject === early)
            #expect((0..<70).map { object.value(forKey: "a\($0)") as? Int64 } == (0..<70).map { Int64($0 * 3) })
            #expect(object.lazyRow != nil, "reads keep the row")
            object.setValue(early, forKey: "late")
            object.setValue(late, forKey: "early")
            #expect(Set(object.changedValues().keys) == ["early", "late"])
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let object = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
            #expect((object.value(forKey: "late") as? ManagedObject)?.value(forKey: "label") as? String == "first")
            #expect((object.value(forKey: "early") as? ManagedObject)?.value(forKey: "label") as? String == "second")
            #expect(object.value(forKey: "a69") as? Int64 == 207)
        }
    }

    @Test func slotSetsKeepEverySlotInOrder() {
        var slots: SlotSet = [130, 2, 64, 0, 63]
        slots.insert(2)
        #expect(Array(slots) == [0, 2, 63, 64, 130])
        #expect(slots.contains(130) && !slots.contains(129) && !slots.contains(500))
        #expect(slots.union([1, 200]).sorted() == [0, 1, 2, 63, 64, 130, 200])
        #expect(SlotSet().isEmpty && !slots.isEmpty)
        #expect(SlotSet([5]) == [5])
        #expect(SlotSet([5, 100]) != [5])
    }
}
