import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// An object whose `validateValue(_:forKey:)`, asked about `label`, also checks `limit`
/// through the same method: each key is checked against its own property's rules.
final class CrossCheckedObject: ManagedObject {
    @Managed var label: String?
    @Managed var limit: Int64

    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
        if key == "label" {
            var limit: Any? = self.limit
            try validateValue(&limit, forKey: "limit")
        }
    }
}

/// Saving validates each property by its slot; a `validateValue(_:forKey:)` override that asks
/// about another key during the save gets that key's rules, error code and message.
@Suite struct ValidationOverrideKeyTests {
    static func model() -> ManagedObjectModel {
        let label = ModelBuilder.attribute("label", .string)
        label.minValue = 3
        let limit = ModelBuilder.attribute("limit", .integer64, defaultValue: Int64(0))
        limit.maxValue = Int64(10)
        let entity = ModelBuilder.entity("CrossChecked", [label, limit], className: "CrossCheckedObject")
        CrossCheckedObject.register(for: "CrossChecked")
        return ModelBuilder.model([entity])
    }

    @Test func anOverrideAskingAboutAnotherKeyGetsThatKeysRules() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = EntityDescription.insertNewObject(forEntityName: "CrossChecked", into: context)
            object.setValue("long enough", forKey: "label")
            object.setValue(Int64(20), forKey: "limit")
            var error: CoreDataError?
            do { try context.save() } catch let failure as CoreDataError { error = failure }
            // Once asked from label's check, once for limit itself: both by limit's rule.
            let errors =
                error?.code == .validationMultipleErrors ? error?.detailedErrors ?? [] : error.map { [$0] } ?? []
            #expect(errors.count == 2)
            for failure in errors {
                #expect(failure.code == .validationNumberTooLarge)
                #expect(failure.key == "limit")
                #expect(failure.message == "CrossChecked.limit is larger than 10.0")
            }
            object.setValue("ab", forKey: "label")
            object.setValue(Int64(7), forKey: "limit")
            let short = try #require(ValidationTests.failure { try context.save() })
            #expect(short.code == .validationStringTooShort)
            #expect(short.key == "label")
            object.setValue("abc", forKey: "label")
            try context.save()
        }
        try container.close()

        let reopened = try GraphModel.container(at: folder.store(), model: model)
        let reader = reopened.newBackgroundContext()
        let values = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "CrossChecked")).map {
                ($0.value(forKey: "label") as? String, $0.value(forKey: "limit") as? Int64)
            }
        }
        #expect(values.count == 1)
        #expect(values.first?.0 == "abc")
        #expect(values.first?.1 == 7)
    }
}
