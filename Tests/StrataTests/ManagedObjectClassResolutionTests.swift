import Foundation
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

/// The entity's `managedObjectClassName` selects the subclass, as Core Data's does.
@Suite struct ManagedObjectClassResolutionTests {
    static let module = String(String(reflecting: ResolvedGadget.self).split(separator: ".")[0])

    /// Gadget (class `Module.ResolvedGadget`) with the subentity PremiumGadget (class
    /// `Module.ResolvedPremiumGadget`), and Widget with the plain class name `PlainNamedWidget`.
    static func model() -> ManagedObjectModel {
        let gadget = ModelBuilder.entity(
            "ResolvedGadgetEntity", [ModelBuilder.attribute("label", .string)], className: String(reflecting: ResolvedGadget.self))
        let premium = ModelBuilder.entity(
            "ResolvedPremiumGadgetEntity", [ModelBuilder.attribute("tier", .integer64, defaultValue: Int64(0))],
            className: String(reflecting: ResolvedPremiumGadget.self))
        gadget.subentities = [premium]
        let widget = ModelBuilder.entity("PlainNamedWidgetEntity", [ModelBuilder.attribute("label", .string)], className: "PlainNamedWidget")
        let unresolvable = ModelBuilder.entity("UnresolvableEntity", [ModelBuilder.attribute("label", .string)], className: "NoSuchModule.NoSuchClass")
        return ModelBuilder.model([gadget, premium, widget, unresolvable])
    }

    @Test func moduleQualifiedClassNamesSelectTheSubclass() throws {
        let folder = TemporaryFolder()
        do {
            let container = try GraphModel.container(at: folder.store(), model: Self.model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let gadget = try EntityDescription.insertNewObject(forEntityName: "ResolvedGadgetEntity", into: context)
                #expect(type(of: gadget) == ResolvedGadget.self)
                (gadget as? ResolvedGadget)?.label = "plain"
                let premium = try EntityDescription.insertNewObject(forEntityName: "ResolvedPremiumGadgetEntity", into: context)
                #expect(type(of: premium) == ResolvedPremiumGadget.self)
                (premium as? ResolvedPremiumGadget)?.tier = 3
                let other = try EntityDescription.insertNewObject(forEntityName: "UnresolvableEntity", into: context)
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
            #expect(gadgets.contains { type(of: $0) == ResolvedGadget.self && ($0 as? ResolvedGadget)?.label == "plain" })
            #expect(gadgets.contains { ($0 as? ResolvedPremiumGadget)?.tier == 3 })
        }
        try container.close()
    }

    /// A plain class name (what Xcode writes for the current module) is found in a module the
    /// app registers.
    @Test func plainClassNamesResolveInRegisteredModules() throws {
        ManagedObject.registerClasses(inModule: Self.module)
        let folder = TemporaryFolder()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let widget = try EntityDescription.insertNewObject(forEntityName: "PlainNamedWidgetEntity", into: context)
            #expect(type(of: widget) == PlainNamedWidget.self)
        }
        try container.close()
    }

    /// An explicit registration is still honoured.
    @Test func explicitRegistrationStillWorks() throws {
        final class RegisteredThing: ManagedObject {}
        RegisteredThing.register(for: "ExplicitlyRegisteredEntity")
        let entity = ModelBuilder.entity("ExplicitlyRegisteredEntity", [ModelBuilder.attribute("label", .string)])
        let folder = TemporaryFolder()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let thing = try EntityDescription.insertNewObject(forEntityName: "ExplicitlyRegisteredEntity", into: context)
            #expect(type(of: thing) == RegisteredThing.self)
        }
        try container.close()
    }
}
