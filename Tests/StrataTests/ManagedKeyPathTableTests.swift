import Foundation
import StrataTestSupport
import Synchronization
import Testing
@testable import Strata

/// Counts its instances, to show that naming its key paths creates none.
class CountedGauge: ManagedObject {
    static let instances = Atomic<Int>(0)
    @Managed var reading: Double
    @Managed("label") var caption: String?
    @Managed var linked: CountedGauge?

    required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        Self.instances.add(1, ordering: .relaxed)
        super.init(entity: entity, insertInto: context)
    }

    required init(faultFor objectID: ManagedObjectID, in context: ManagedObjectContext) {
        Self.instances.add(1, ordering: .relaxed)
        super.init(faultFor: objectID, in: context)
    }
}

/// A subclass that inherits `@Managed` properties and declares one more.
final class CalibratedGauge: CountedGauge {
    @Managed var offset: Int32
    @Managed var spare: Bool
}

/// The key-path tables `@Managed` declares: read from the class with no instance, inherited
/// properties included, checked against the entity the class is bound to.
@Suite(.serialized) struct ManagedKeyPathTableTests {
    /// `CountedGauge` with every property, and its sub-entity `CalibratedGauge` without `spare`.
    static func model() -> ManagedObjectModel {
        let gauge = ModelBuilder.entity(
            "CountedGauge",
            [ModelBuilder.attribute("reading", .double, defaultValue: 0.0), ModelBuilder.attribute("label", .string)],
            className: "CountedGauge")
        ModelBuilder.relationship("linked", from: gauge, to: gauge)
        let calibrated = ModelBuilder.entity(
            "CalibratedGauge", [ModelBuilder.attribute("offset", .integer32, defaultValue: Int32(0))],
            className: "CalibratedGauge")
        gauge.subentities = [calibrated]
        CountedGauge.register(for: "CountedGauge")
        CalibratedGauge.register(for: "CalibratedGauge")
        return ModelBuilder.model([gauge, calibrated])
    }

    @Test func namingKeyPathsCreatesNoInstance() {
        let before = CountedGauge.instances.load(ordering: .relaxed)
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.reading) == "reading")
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.caption) == "label")
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.linked?.linked?.caption) == "linked.linked.label")
        #expect(ManagedKeyPathNames.name(of: \CalibratedGauge.linked) == "linked")
        #expect(FetchSortDescriptor(SortDescriptor(\CalibratedGauge.offset))?.key == "offset")
        #expect(CountedGauge.instances.load(ordering: .relaxed) == before)
    }

    @Test func subclassTableListsInheritedPropertiesFirst() {
        let names = ManagedPropertyTable.of(CalibratedGauge.self).properties.map(\.name)
        #expect(names == ["reading", "label", "linked", "offset", "spare"])
        #expect(ManagedPropertyTable.of(CountedGauge.self).properties.map(\.name) == ["reading", "label", "linked"])
        #expect(ManagedKeyPathNames.name(of: \CalibratedGauge.caption) == "label")
        #expect(ManagedKeyPathNames.name(of: \CalibratedGauge.spare) == "spare")
        #expect(ManagedKeyPathNames.name(of: \CalibratedGauge.reading) == "reading")
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.linked?.reading) == "linked.reading")
    }

    @Test func otherKeyPathsHaveNoName() {
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.objectID) == nil)
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.caption?.count) == nil)
        #expect(ManagedKeyPathNames.name(of: \CountedGauge.linked?.objectID) == nil)
        #expect(ManagedKeyPathNames.name(of: \String.count) == nil)
    }

    @Test func propertiesTheEntityLacksAreFoundWhenTheClassIsBound() {
        let model = Self.model()
        let entities = model.entitiesByName
        #expect(
            ManagedPropertyTable.missingProperties(of: CalibratedGauge.self, in: entities["CalibratedGauge"]!) == [
                "spare"
            ])
        #expect(ManagedPropertyTable.missingProperties(of: CountedGauge.self, in: entities["CountedGauge"]!).isEmpty)
        #expect(ManagedPropertyTable.missingProperties(of: CountedGauge.self, in: entities["CalibratedGauge"]!).isEmpty)
    }

    @Test func predicatesAndSortsOnDeclaredNamesRoundTripThroughAStore() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let entities = container.managedObjectModel.entitiesByName
                let hub = CountedGauge(entity: entities["CountedGauge"]!, insertInto: context)
                hub.reading = 1.5
                hub.caption = "hub"
                for offset in [3, 1, 2] as [Int32] {
                    let gauge = CalibratedGauge(entity: entities["CalibratedGauge"]!, insertInto: context)
                    gauge.offset = offset
                    gauge.reading = Double(offset) * 10
                    gauge.caption = "gauge \(offset)"
                    gauge.linked = hub
                }
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = try FetchRequest<CalibratedGauge>(
                predicate: #Predicate { $0.linked?.caption == "hub" && $0.reading > 15 },
                sortBy: [SortDescriptor(\.offset, order: .reverse)])
            #expect(
                request.predicate.map(FoundationPredicateTests.structure)
                    == "(linked.label == \"hub\" AND reading > 15.0)")
            #expect(try context.fetch(request).map(\.caption) == ["gauge 3", "gauge 2"])
            let byHub = try FetchRequest<CountedGauge>(sortBy: [
                SortDescriptor(\.linked?.caption), SortDescriptor(\.reading),
            ])
            #expect(byHub.sortDescriptors?.map(\.key) == ["linked.label", "reading"])
            #expect(try context.fetch(byHub).map(\.caption) == ["hub", "gauge 1", "gauge 2", "gauge 3"])
        }
    }
}
