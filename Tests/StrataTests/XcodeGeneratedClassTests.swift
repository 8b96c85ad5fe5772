import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A subclass found only through the model's plain class name: never created directly nor
/// registered, by this test or any other.
final class UnregisteredCodegenGadget: ManagedObject {
    @Managed var label: String?
}

/// The classes Xcode generates for `Models/XcodeCodegen.xcdatamodel` (in `XcodeGenerated/`),
/// ported by the documented steps only, used through every generated accessor, saved, reopened
/// and fetched back as the generated classes; in a fresh process with no registration call.
///
/// `XcodeDepartment` and `XcodeEmployee` are "Category/Extension" codegen (properties and
/// accessors in extensions), `XcodeProject` "Manual/None" with the declarations in the class
/// body. No other test uses these classes.
@Suite struct XcodeGeneratedClassTests {
    static var modelURL: URL {
        Bundle.module.url(forResource: "XcodeCodegen", withExtension: "xcdatamodel", subdirectory: "Models")!
    }

    static func container(_ url: URL) throws -> PersistentContainer {
        try GraphModel.container(at: url, model: try ManagedObjectModel(checkedContentsOf: modelURL))
    }

    static let founded = Date(timeIntervalSinceReferenceDate: 86_400)
    static let badge = UUID(uuidString: "6C9B3E4A-0D6F-4C1E-9C53-2F1B1D8C7A10")!
    static let homepage = URL(string: "https://example.com/ada")!

    /// Builds the graph through every generated accessor, checking each step, and saves it.
    static func seed(_ url: URL) throws {
        let container = try container(url)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = XcodeDepartment(context: context)
            research.name = "Research"
            research.budget = 1_500_000
            research.founded = founded
            let (ada, grace, linus, margaret) = (
                XcodeEmployee(context: context), XcodeEmployee(context: context), XcodeEmployee(context: context),
                XcodeEmployee(context: context)
            )
            for (employee, name) in [(ada, "Ada"), (grace, "Grace"), (linus, "Linus"), (margaret, "Margaret")] {
                employee.name = name
            }
            ada.active = true
            ada.age = 36
            ada.level = 70_000
            ada.rating = 4.5
            ada.score = 0.75
            ada.badge = badge
            ada.homepage = homepage
            ada.photo = Data([1, 2, 3])
            ada.salary = NSDecimalNumber(string: "123456.78")

            // Unordered to-many, through the four generated accessors.
            research.addToEmployees(ada)
            research.addToEmployees(NSSet(array: [grace, linus]))
            research.removeFromEmployees(linus)
            research.addToEmployees(NSSet(array: [linus, margaret]))
            research.removeFromEmployees(NSSet(array: [margaret, linus]))
            #expect(names(research.employees) == ["Ada", "Grace"])
            #expect(ada.department === research && grace.department === research)
            #expect(linus.department == nil && margaret.department == nil)

            // Ordered to-many, through the ten generated accessors.
            let projects = (1...5).map { number in
                let project = XcodeProject(context: context)
                project.title = "P\(number)"
                project.priority = Int16(number)
                project.headcount = number * 10
                project.estimate = NSNumber(value: Double(number) + 0.5)
                return project
            }
            let (p1, p2, p3, p4, p5) = (projects[0], projects[1], projects[2], projects[3], projects[4])
            research.addToProjects(p1)
            research.insertIntoProjects(p2, at: 0)
            #expect(titles(research.projects) == ["P2", "P1"])
            research.insertIntoProjects([p3, p4], at: NSIndexSet(indexesIn: NSRange(location: 1, length: 2)))
            #expect(titles(research.projects) == ["P2", "P3", "P4", "P1"])
            research.removeFromProjects(at: 0)
            #expect(titles(research.projects) == ["P3", "P4", "P1"])
            #expect(p2.department == nil)
            research.replaceProjects(at: 1, with: p5)
            #expect(titles(research.projects) == ["P3", "P5", "P1"])
            #expect(p4.department == nil && p5.department === research)
            research.removeFromProjects(at: NSIndexSet(index: 2))
            #expect(titles(research.projects) == ["P3", "P5"])
            research.replaceProjects(at: NSIndexSet(index: 0), with: [p1])
            #expect(titles(research.projects) == ["P1", "P5"])
            #expect(p3.department == nil)
            research.addToProjects(NSOrderedSet(array: [p3, p4]))
            research.removeFromProjects(NSOrderedSet(array: [p4]))
            research.removeFromProjects(p5)
            research.addToProjects(p2)
            #expect(titles(research.projects) == ["P1", "P3", "P2"])
            #expect(p2.department === research && p5.department == nil)

            // Many-to-many, through both sides' generated accessors.
            ada.addToProjects(p1)
            ada.addToProjects(NSSet(array: [p3, p2]))
            ada.removeFromProjects(p2)
            p1.addToMembers(grace)
            p1.addToMembers(NSSet(array: [linus]))
            p1.removeFromMembers(NSSet(array: [linus]))
            p3.removeFromMembers(ada)
            #expect(titles(ada.projects) == ["P1"])
            #expect(names(p1.members) == ["Ada", "Grace"])
            #expect(titles(grace.projects) == ["P1"])
            #expect(names(p3.members).isEmpty && names(p2.members).isEmpty)

            // Setting an NSSet or NSOrderedSet replaces the relationship, inverses kept.
            let operations = XcodeDepartment(context: context)
            operations.name = "Operations"
            operations.employees = NSSet(array: [margaret, linus])
            operations.projects = NSOrderedSet(array: [p5, p4])
            #expect(margaret.department === operations && p4.department === operations)
            linus.department = research
            #expect(names(operations.employees) == ["Margaret"])
            #expect(names(research.employees) == ["Ada", "Grace", "Linus"])
            operations.projects = nil
            #expect(titles(operations.projects).isEmpty && p5.department == nil && p4.department == nil)
            operations.projects = NSOrderedSet(array: [p4, p5])
            #expect(research.id == ObjectIdentifier(research))
            try context.save()
        }
        try container.close()
    }

    /// The names of a set of employees, sorted.
    static func names(_ employees: NSSet?) -> [String] {
        (employees?.allObjects as? [XcodeEmployee] ?? []).compactMap(\.name).sorted()
    }

    /// The titles of projects, in order (sorted for a set).
    static func titles(_ projects: NSOrderedSet?) -> [String] {
        (projects?.array as? [XcodeProject] ?? []).compactMap(\.title)
    }

    static func titles(_ projects: NSSet?) -> [String] {
        (projects?.allObjects as? [XcodeProject] ?? []).compactMap(\.title).sorted()
    }

    /// Checks what ``seed(_:)`` saved, fetched through the generated classes; returns whether
    /// every object came back as its generated class (the checks are also recorded as issues).
    @discardableResult
    static func checkSaved(_ url: URL) throws -> Bool {
        let container = try container(url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let untyped = try context.fetch(FetchRequest<ManagedObject>(entityName: "XcodeDepartment"))
            let request = XcodeDepartment.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: false)]
            let departments = try context.fetch(request)
            let projects = try context.fetch(FetchRequest<ManagedObject>(entityName: "XcodeProject"))
            let employees = try context.fetch(XcodeEmployee.fetchRequest())
            let classes =
                untyped.count == 2 && untyped.allSatisfy { type(of: $0) == XcodeDepartment.self }
                && projects.count == 5 && projects.allSatisfy { type(of: $0) == XcodeProject.self }
                && employees.count == 4
            #expect(classes)
            guard departments.count == 2 else { return false }
            let (research, operations) = (departments[0], departments[1])
            #expect(research.name == "Research" && operations.name == "Operations")
            #expect(research.budget == 1_500_000 && research.founded == founded && operations.budget == 0)
            #expect(names(research.employees) == ["Ada", "Grace", "Linus"])
            #expect(names(operations.employees) == ["Margaret"])
            #expect(titles(research.projects) == ["P1", "P3", "P2"])
            #expect(titles(operations.projects) == ["P4", "P5"])
            let ada = try #require((research.employees?.allObjects as? [XcodeEmployee])?.first { $0.name == "Ada" })
            #expect(ada.active && ada.age == 36 && ada.level == 70_000 && ada.rating == 4.5 && ada.score == 0.75)
            #expect(ada.badge == badge && ada.homepage == homepage && ada.photo == Data([1, 2, 3]))
            #expect(ada.salary == NSDecimalNumber(string: "123456.78"))
            #expect(ada.department === research)
            #expect(titles(ada.projects) == ["P1"])
            let p1 = try #require(research.projects?.firstObject as? XcodeProject)
            #expect(names(p1.members) == ["Ada", "Grace"])
            #expect(p1.headcount == 10 && p1.priority == 1 && p1.estimate == NSNumber(value: 1.5))
            #expect(p1.value(forKey: "headcount") as? Int64 == 10)
            return classes
        }
    }

    @Test func everyGeneratedAccessorWorksAndTheGraphIsSavedAndReopened() throws {
        let folder = TemporaryDirectory()
        try Self.seed(folder.store())
        // A fresh coordinator and model on the same store directory.
        try Self.checkSaved(folder.store())
    }

    /// A new process, with no registration call and no instance created before the fetch, gets
    /// the generated classes from the model's plain class names.
    @Test func aFreshProcessFetchesTheGeneratedClassesWithoutRegistration() async throws {
        let folder = TemporaryDirectory()
        try Self.seed(folder.store())
        let path = folder.store().path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let classes = try XcodeGeneratedClassTests.checkSaved(URL(fileURLWithPath: path))
            precondition(classes, "the fetched objects are not of the generated classes")
        }
    }

    /// Key paths of properties declared in extensions name their model properties, so
    /// `#Predicate` and `SortDescriptor` translate.
    @Test func keyPathsOfExtensionPropertiesNameModelProperties() throws {
        #expect(ManagedKeyPathNames.name(of: \XcodeEmployee.name) == "name")
        #expect(ManagedKeyPathNames.name(of: \XcodeEmployee.age) == "age")
        #expect(ManagedKeyPathNames.name(of: \XcodeDepartment.budget) == "budget")
        #expect(ManagedKeyPathNames.name(of: \XcodeEmployee.department?.name) == "department.name")
        #expect(ManagedKeyPathNames.name(of: \XcodeProject.title) == "title")
        let folder = TemporaryDirectory()
        try Self.seed(folder.store())
        let container = try Self.container(folder.store())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = XcodeEmployee.fetchRequest()
            request.predicate = FetchPredicate(
                #Predicate<XcodeEmployee> { $0.age > 30 || $0.department?.name == "Operations" })
            request.sortDescriptors = [try #require(FetchSortDescriptor(SortDescriptor(\XcodeEmployee.name)))]
            #expect(try context.fetch(request).compactMap(\.name) == ["Ada", "Margaret"])
        }
    }

    /// A plain class name finds a class that was never created nor registered, from the
    /// images' type records.
    @Test func plainClassNamesFindUnregisteredClasses() throws {
        #expect(
            ManagedObjectClassRegistry.recordedClass(named: "UnregisteredCodegenGadget")
                == UnregisteredCodegenGadget.self)
        #expect(ManagedObjectClassRegistry.recordedClass(named: "NoSuchCodegenClassAnywhere") == nil)
        #expect(
            ManagedObjectClassRegistry.recordedClass(named: "TemporaryDirectory") == nil, "not a ManagedObject subclass"
        )
        let entity = ModelBuilder.entity(
            "CodegenGadget", [ModelBuilder.attribute("label", .string)], className: "UnregisteredCodegenGadget")
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: ModelBuilder.model([entity]))
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.performAndWait {
            let gadget = EntityDescription.insertNewObject(forEntityName: "CodegenGadget", into: context)
            #expect(type(of: gadget) == UnregisteredCodegenGadget.self)
        }
    }

    /// The proxies of `mutableSetValue(forKey:)` and `mutableOrderedSetValue(forKey:)` have
    /// `NSMutableSet`'s and `NSMutableOrderedSet`'s members, saved and read back.
    @Test func mutableProxiesHaveFoundationsMembers() throws {
        let folder = TemporaryDirectory()
        let container = try Self.container(folder.store())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let research = XcodeDepartment(context: context)
            research.name = "Research"
            let projects = (0..<4).map { n -> XcodeProject in
                let project = XcodeProject(context: context)
                project.title = "P\(n)"
                return project
            }
            let ordered = research.mutableOrderedSetValue(forKey: "projects")
            ordered.union(NSOrderedSet(array: projects))
            #expect(ordered.index(of: projects[2]) == 2)
            #expect(ordered.firstObject === projects[0] && ordered.lastObject === projects[3])
            ordered.exchangeObject(at: 0, withObjectAt: 3)
            #expect(Self.titles(research.projects) == ["P3", "P1", "P2", "P0"])
            ordered.moveObjects(at: IndexSet([2, 3]), to: 0)
            #expect(Self.titles(research.projects) == ["P2", "P0", "P3", "P1"])
            ordered.intersect(NSOrderedSet(array: [projects[1], projects[2], projects[3]]))
            #expect(Self.titles(research.projects) == ["P2", "P3", "P1"])
            ordered.replaceObject(at: 1, with: projects[0])
            ordered.removeObject(at: 2)
            #expect(Self.titles(research.projects) == ["P2", "P0"])
            #expect(ordered.index(of: projects[3]) == NSNotFound)

            let staff = (0..<3).map { n -> XcodeEmployee in
                let employee = XcodeEmployee(context: context)
                employee.name = "E\(n)"
                return employee
            }
            let employees = research.mutableSetValue(forKey: "employees")
            employees.union(NSSet(array: staff))
            employees.intersect(NSSet(array: [staff[0], staff[2]]))
            employees.minus(NSSet(array: [staff[2]]))
            #expect(Self.names(research.employees) == ["E0"])
            // Swift's NSMutableSet spellings: Set<AnyHashable>, and typed sets.
            employees.union(Set<AnyHashable>([staff[1]]))
            employees.intersect(Set([staff[1]]))
            #expect(Self.names(research.employees) == ["E1"])
            employees.minus(Set<AnyHashable>([staff[1]]))
            employees.union(Set([staff[0]]))
            #expect(staff[1].department == nil && staff[0].department === research, "inverses follow")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let research = try #require(try reader.fetch(XcodeDepartment.fetchRequest()).first)
            #expect(Self.titles(research.projects) == ["P2", "P0"])
            #expect(Self.names(research.employees) == ["E0"])
        }
    }
}
