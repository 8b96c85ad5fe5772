import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// One `@Managed` class bound to two entities that lay its properties out at different slots.
final class SlotHintLabel: ManagedObject {
    @Managed var label: String
    @Managed var shelf: SlotHintShelf?
}

/// The owner of `SlotHintLabel` objects of both entities.
final class SlotHintShelf: ManagedObject {
    @Managed var title: String
    @Managed var stickers: Set<SlotHintLabel>
    @Managed var badges: Set<SlotHintLabel>
}

/// The `@Managed` accessors find a property's slot through a hint kept per declared property,
/// and inverse relationships through slots resolved once per entity: the hint must never pick
/// another property's slot when one class serves entities with other layouts, or when the
/// related object is of a sub-entity.
@Suite struct ManagedSlotHintTests {
    /// Sticker (label, shelf) and Badge (code, weight, label, shelf), both of class
    /// `SlotHintLabel`; GoldBadge, a sub-entity of Badge with one more attribute; Shelf with
    /// to-many stickers and badges, the inverses of their `shelf`.
    static func model() -> ManagedObjectModel {
        let sticker = ModelBuilder.entity(
            "Sticker", [ModelBuilder.attribute("label", .string)], className: "SlotHintLabel")
        let badge = ModelBuilder.entity(
            "Badge",
            [
                ModelBuilder.attribute("code", .string), ModelBuilder.attribute("weight", .integer64),
                ModelBuilder.attribute("label", .string),
            ],
            className: "SlotHintLabel")
        let gold = ModelBuilder.entity(
            "GoldBadge", [ModelBuilder.attribute("karat", .integer16)], className: "SlotHintLabel")
        badge.subentities = [gold]
        let shelf = ModelBuilder.entity("Shelf", [ModelBuilder.attribute("title", .string)], className: "SlotHintShelf")
        ModelBuilder.inverse(
            ModelBuilder.relationship("stickers", from: shelf, to: sticker, toMany: true),
            ModelBuilder.relationship("shelf", from: sticker, to: shelf))
        ModelBuilder.inverse(
            ModelBuilder.relationship("badges", from: shelf, to: badge, toMany: true),
            ModelBuilder.relationship("shelf", from: badge, to: shelf))
        SlotHintLabel.register(for: "Sticker")
        SlotHintShelf.register(for: "Shelf")
        return ModelBuilder.model([sticker, badge, gold, shelf])
    }

    @Test func oneClassOverEntitiesWithOtherLayoutsKeepsEachValueInItsProperty() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let entities = model.entitiesByName
            let shelf = SlotHintShelf(entity: entities["Shelf"]!, insertInto: context)
            shelf.title = "front"
            // Alternate the entities so that every access finds the hint of the other layout.
            for index in 0..<3 {
                let sticker = SlotHintLabel(entity: entities["Sticker"]!, insertInto: context)
                sticker.label = "sticker \(index)"
                let badge = SlotHintLabel(entity: entities["Badge"]!, insertInto: context)
                badge.setValue("code \(index)", forKey: "code")
                badge.label = "badge \(index)"
                let gold = SlotHintLabel(entity: entities["GoldBadge"]!, insertInto: context)
                gold.label = "gold \(index)"
                gold.setValue(Int16(index), forKey: "karat")
                sticker.shelf = shelf
                badge.shelf = shelf
                shelf.badges.insert(gold)
                #expect(
                    sticker.label == "sticker \(index)" && badge.label == "badge \(index)"
                        && gold.label == "gold \(index)")
                #expect(badge.value(forKey: "code") as? String == "code \(index)")
            }
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let shelf = try #require(try context.fetch(FetchRequest<SlotHintShelf>(entityName: "Shelf")).first)
            #expect(shelf.title == "front")
            #expect(Set(shelf.stickers.map(\.label)) == ["sticker 0", "sticker 1", "sticker 2"])
            #expect(Set(shelf.badges.map(\.label)) == ["badge 0", "badge 1", "badge 2", "gold 0", "gold 1", "gold 2"])
            for badge in shelf.badges {
                #expect(badge.shelf === shelf)
                if badge.entity.name == "GoldBadge" {
                    #expect(badge.value(forKey: "code") == nil)
                    #expect(badge.value(forKey: "karat") as? Int16 == Int16(badge.label.dropFirst(5))!)
                } else {
                    #expect(badge.value(forKey: "code") as? String == "code \(badge.label.dropFirst(6))")
                }
            }
            #expect(shelf.stickers.allSatisfy { $0.shelf === shelf && $0.entity.name == "Sticker" })
        }
    }

    @Test func movingAnObjectOfASubEntityUpdatesBothOwners() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let entities = model.entitiesByName
            let first = SlotHintShelf(entity: entities["Shelf"]!, insertInto: context)
            first.title = "first"
            let second = SlotHintShelf(entity: entities["Shelf"]!, insertInto: context)
            second.title = "second"
            let gold = SlotHintLabel(entity: entities["GoldBadge"]!, insertInto: context)
            gold.label = "gold"
            first.badges = [gold]
            #expect(gold.shelf === first)
            gold.shelf = second
            #expect(first.badges.isEmpty && second.badges == [gold])
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let shelves = try context.fetch(FetchRequest<SlotHintShelf>(entityName: "Shelf"))
            let first = try #require(shelves.first { $0.title == "first" })
            let second = try #require(shelves.first { $0.title == "second" })
            #expect(first.badges.isEmpty)
            #expect(second.badges.map(\.label) == ["gold"])
            #expect(second.badges.first?.shelf === second)
        }
    }
}
