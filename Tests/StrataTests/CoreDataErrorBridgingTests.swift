import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `error as NSError` reads as on Apple platforms: Core Data's domain, codes and `userInfo` keys.
@Suite struct CoreDataErrorBridgingTests {
    @Test func aFailedSaveBridgesWithDetailedValidationErrors() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.setValue(-5, forKey: "salary")
            let nameless = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            do {
                try context.save()
                Issue.record("the save should fail")
            } catch {
                // `catch let error as NSError` does not match on Linux (the runtime does not
                // bridge in conditional casts); bridge with `as`.
                let error = error as NSError
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == ValidationMultipleErrorsError)
                #expect(error.code == 1560)
                let details = try #require(error.userInfo[DetailedErrorsKey] as? [NSError])
                #expect(details.count == 2)
                let tooSmall = try #require(details.first { $0.code == ValidationNumberTooSmallError })
                #expect(tooSmall.domain == NSCocoaErrorDomain)
                #expect(tooSmall.userInfo[ValidationKeyErrorKey] as? String == "salary")
                #expect(tooSmall.userInfo[ValidationObjectErrorKey] as? ManagedObject === ada)
                #expect(tooSmall.userInfo[ValidationValueErrorKey] as? Int64 == -5)
                #expect(tooSmall.localizedDescription.contains("Employee.salary"))
                let missing = try #require(details.first { $0.code == ValidationMissingMandatoryPropertyError })
                #expect(missing.userInfo[ValidationKeyErrorKey] as? String == "name")
                #expect(missing.userInfo[ValidationObjectErrorKey] as? ManagedObject === nameless)
            }
            #expect(context.hasChanges, "a failed save keeps the changes")
        }
    }

    @Test func anOverridesErrorNamesTheObject() throws {
        let folder = TemporaryDirectory()
        let model = ModelBuilder.model([
            ModelBuilder.entity("Handle", [ModelBuilder.attribute("text", .string)], className: "BridgedHandle")
        ])
        BridgedHandle.register(for: "Handle")
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        context.performAndWait {
            let handle = BridgedHandle(context: context)
            handle.setValue("a@b", forKey: "text")
            do {
                try context.save()
                Issue.record("the override should fail the save")
            } catch {
                let error = error as NSError
                #expect(error.code == ManagedObjectValidationError)
                #expect(error.userInfo[ValidationKeyErrorKey] as? String == "text")
                #expect(error.userInfo[ValidationObjectErrorKey] as? ManagedObject === handle)
                #expect(error.userInfo[ValidationValueErrorKey] as? String == "a@b")
            }
        }
    }

    @Test func codeMessageAndUnderlyingErrorBridge() {
        struct Cause: Error, CustomNSError {
            static var errorDomain: String { "Cause" }
            var errorCode: Int { 7 }
        }
        let error = CoreDataError(.persistentStoreOpen, "cannot open the store", underlyingError: Cause()) as NSError
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == PersistentStoreOpenError)
        #expect(error.localizedDescription == "cannot open the store")
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        #expect(underlying?.domain == "Cause")
        #expect(underlying?.code == 7)
        #expect(error.userInfo[DetailedErrorsKey] == nil)
        #expect(error.userInfo[ValidationKeyErrorKey] == nil)
    }
}

/// A subclass with per-key validation, as Core Data code overrides it.
final class BridgedHandle: ManagedObject {
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
        if key == "text", (value as? String)?.contains("@") == true {
            throw CoreDataError(.managedObjectValidation, "handles have no @", key: key)
        }
    }
}
