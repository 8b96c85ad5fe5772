import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Subclasses these tests find only through the model's class names: they are never
/// instantiated directly nor registered.
final class ResolvedGadget: ManagedObject {
    @Managed var label: String?
}

final class ResolvedPremiumGadget: ManagedObject {
    @Managed var label: String?
    @Managed var tier: Int64
}

final class PlainNamedWidget: ManagedObject {
    @Managed var label: String?
}

/// The top-level class a plain class name names, though a nested class shares its name.
final class ResolvedSprocket: ManagedObject {}

/// Holds a class named like a top-level one.
enum NestedClasses {
    final class ResolvedSprocket: ManagedObject {}
}

/// The entity's `managedObjectClassName` selects the subclass, as Core Data's does.
@Suite struct ManagedObjectClassResolutionTests {
    static let module = String(String(reflecting: ResolvedGadget.self).split(separator: ".")[0])

    /// `EntityDescription.insertNewObject(forEntityName:into:)`, which consults the class
    /// registry; held as a throwing function so the call reads the same whether it throws or not.
    static func insert(_ entityName: String, _ context: ManagedObjectContext) throws -> ManagedObject {
        let insert: (String, ManagedObjectContext) throws -> ManagedObject = EntityDescription.insertNewObject(
            forEntityName:into:)
        return try insert(entityName, context)
    }

    /// Gadget (class `Module.ResolvedGadget`) with the subentity PremiumGadget (class
    /// `Module.ResolvedPremiumGadget`), and Widget with the plain class name `PlainNamedWidget`.
    static func model() -> ManagedObjectModel {
        let gadget = ModelBuilder.entity(
            "ResolvedGadgetEntity", [ModelBuilder.attribute("label", .string)],
            className: String(reflecting: ResolvedGadget.self))
        let premium = ModelBuilder.entity(
            "ResolvedPremiumGadgetEntity", [ModelBuilder.attribute("tier", .integer64, defaultValue: Int64(0))],
            className: String(reflecting: ResolvedPremiumGadget.self))
        gadget.subentities = [premium]
        let widget = ModelBuilder.entity(
            "PlainNamedWidgetEntity", [ModelBuilder.attribute("label", .string)], className: "PlainNamedWidget")
        let unresolvable = ModelBuilder.entity(
            "UnresolvableEntity", [ModelBuilder.attribute("label", .string)], className: "NoSuchModule.NoSuchClass")
        return ModelBuilder.model([gadget, premium, widget, unresolvable])
    }

    @Test func moduleQualifiedClassNamesSelectTheSubclass() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let gadget = try Self.insert("ResolvedGadgetEntity", context)
                #expect(type(of: gadget) == ResolvedGadget.self)
                (gadget as? ResolvedGadget)?.label = "plain"
                let premium = try Self.insert("ResolvedPremiumGadgetEntity", context)
                #expect(type(of: premium) == ResolvedPremiumGadget.self)
                (premium as? ResolvedPremiumGadget)?.tier = 3
                let other = try Self.insert("UnresolvableEntity", context)
                #expect(type(of: other) == ManagedObject.self, "a class name that names no class gives ManagedObject")
                try context.save()
            }
            try container.close()
        }
        // Reopened with a new model (new entity descriptions): fetched objects are of the classes.
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "ResolvedGadgetEntity")
            request.sortDescriptors = [FetchSortDescriptor(key: "label", ascending: true)]
            let gadgets = try context.fetch(request)
            #expect(gadgets.count == 2)
            #expect(
                gadgets.contains { type(of: $0) == ResolvedGadget.self && ($0 as? ResolvedGadget)?.label == "plain" })
            #expect(gadgets.contains { ($0 as? ResolvedPremiumGadget)?.tier == 3 })
        }
        try container.close()
    }

    /// A plain class name (what Xcode writes for the current module) is found in a module the
    /// app registers.
    @Test func plainClassNamesResolveInRegisteredModules() throws {
        ManagedObject.registerClasses(inModule: Self.module)
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let widget = try Self.insert("PlainNamedWidgetEntity", context)
            #expect(type(of: widget) == PlainNamedWidget.self)
        }
        try container.close()
    }

    /// A nested class registered by creating an instance does not take a model's plain class
    /// name from the top-level class of that name (test processes and apps declare classes such
    /// as `Employee` at several levels).
    @Test func aPlainClassNameNamesTheTopLevelClassNotANestedOne() throws {
        let nested = ModelBuilder.entity(
            "NestedSprocketEntity", className: String(reflecting: NestedClasses.ResolvedSprocket.self))
        let plain = ModelBuilder.entity("PlainSprocketEntity", className: "ResolvedSprocket")
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([nested, plain]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            _ = NestedClasses.ResolvedSprocket(context: context)
            let nested = try Self.insert("NestedSprocketEntity", context)
            #expect(type(of: nested) == NestedClasses.ResolvedSprocket.self)
            let plain = try Self.insert("PlainSprocketEntity", context)
            #expect(type(of: plain) == ResolvedSprocket.self)
        }
        try container.close()
    }

    /// An explicit registration is still honoured.
    @Test func explicitRegistrationStillWorks() throws {
        final class RegisteredThing: ManagedObject {}
        RegisteredThing.register(for: "ExplicitlyRegisteredEntity")
        let entity = ModelBuilder.entity("ExplicitlyRegisteredEntity", [ModelBuilder.attribute("label", .string)])
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let thing = try Self.insert("ExplicitlyRegisteredEntity", context)
            #expect(type(of: thing) == RegisteredThing.self)
        }
        try container.close()
    }
}
