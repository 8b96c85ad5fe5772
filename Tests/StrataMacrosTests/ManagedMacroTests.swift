import Testing

/// The `@Managed` and `@ManagedAccessor` macros' expansions, as the compiler expands them in code
/// that imports Strata: accessors by model name, the declaration of the key path, and the errors
/// the macros report for declarations they cannot manage.
@Suite struct ManagedMacroTests {
    /// Compiles `source` (with `context` declared after it) and expects exactly these expansions,
    /// in any order, and exactly these macro errors.
    static func expect(
        _ source: String, context: String = "", expands expanded: [String],
        diagnostics: [MacroCompilation.Diagnostic] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let compiled = try MacroCompilation(source, context: context)
        #expect(compiled.expansions.map(\.text).sorted() == expanded.sorted(), sourceLocation: sourceLocation)
        #expect(compiled.diagnostics == diagnostics.sorted(), sourceLocation: sourceLocation)
    }

    /// The accessor block of a property stored under `key`, reading its slot hint from `holder`
    /// (`nil` where the macro passes none).
    static func accessors(key: String, holder: String?) -> String {
        let hint = holder.map { "\($0).slotHint" } ?? "nil"
        return """
            {
                get {
                    _managedValue(forKey: "\(key)", hint: \(hint))
                }
                set {
                    _setManagedValue(newValue, forKey: "\(key)", hint: \(hint))
                }
            }
            """
    }

    /// The peer declarations of property `name` of `type` stored under `key`: the key path's
    /// declaration, with a slot hint and a stored holder where `stored`.
    static func declaration(of name: String, in type: String, key: String, stored: Bool) -> String {
        let holder = "__StrataManaged_\(name.filter { $0 != "`" })"
        let declaration = """
            private struct \(holder): _ManagedPropertyDeclaration {
                static var keyPath: AnyKeyPath {
                    \\\(type).\(name)
                }
                static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                    (root as? any (\(type) & _ManagedKeyPathRoot).Type).map {
                        keyPath(of: $0)
                    }
                }
                private static func keyPath<Root: \(type)>(of _: Root.Type) -> AnyKeyPath {
                    \\Root.\(name)
                }
                static var modelName: String {
                    "\(key)"
                }
            """
        guard stored else { return declaration + "\n}" }
        return declaration + """

                static let slotHint = _ManagedSlotHint()
            }

            private let __strataManaged_\(name.filter { $0 != "`" }) = \(holder)()
            """
    }

    @Test func propertyReadsAndWritesItsModelPropertyAndDeclaresItsKeyPath() throws {
        try Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed var name: String
            }
            """,
            expands: [
                Self.accessors(key: "name", holder: "__StrataManaged_name"),
                Self.declaration(of: "name", in: "Employee", key: "name", stored: true),
            ])
    }

    @Test func explicitModelNameIsUsedForAccessAndDeclaration() throws {
        try Self.expect(
            """
            final class Badge: ManagedObject {
                @Managed("title") var label: String?
            }
            """,
            expands: [
                Self.accessors(key: "title", holder: "__StrataManaged_label"),
                Self.declaration(of: "label", in: "Badge", key: "title", stored: true),
            ])
    }

    @Test func nestedClassAndEscapedNameAreSpelledInTheKeyPath() throws {
        try Self.expect(
            """
            enum Catalog {
                final class Item: ManagedObject {
                    @Managed var `default`: Set<Item>
                }
            }
            """,
            expands: [
                Self.accessors(key: "default", holder: "__StrataManaged_default"),
                Self.declaration(of: "`default`", in: "Catalog.Item", key: "default", stored: true),
            ])
    }

    @Test func initialValueIsAnError() throws {
        let message = "@Managed properties take their default value from the model, not from an initial value"
        try Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed var salary: Int64 = 0
            }
            """,
            expands: [],
            diagnostics: [.init(line: 2, column: 32, message: message), .init(line: 2, column: 32, message: message)])
    }

    @Test func propertyInAnExtensionDeclaresItsKeyPathWithoutAStoredHolder() throws {
        try Self.expect(
            """
            extension Employee {
                @Managed public var nickname: String?
            }
            """,
            context: "final class Employee: ManagedObject {}",
            expands: [
                Self.accessors(key: "nickname", holder: nil),
                Self.declaration(of: "nickname", in: "Employee", key: "nickname", stored: false),
            ])
    }

    @Test func propertyOutsideAClassOrExtensionIsAnError() throws {
        try Self.expect(
            """
            struct Employee {
                @Managed var nickname: String?
            }
            """,
            expands: [Self.accessors(key: "nickname", holder: nil)],
            diagnostics: [
                .init(
                    line: 2, column: 5,
                    message: "@Managed properties are declared in a ManagedObject subclass or an extension of one")
            ])
    }

    /// Xcode's generated accessors of an unordered to-many relationship, as ported (`@objc(...)`
    /// lines deleted, `@NSManaged` → `@Managed`).
    @Test func unorderedToManyAccessorsGetBodies() throws {
        try Self.expect(
            """
            extension Department {
                @ManagedAccessor public func addToEmployees(_ value: Employee)
                @ManagedAccessor public func removeFromEmployees(_ value: Employee)
                @ManagedAccessor public func addToEmployees(_ values: NSSet)
                @ManagedAccessor public func removeFromEmployees(_ values: NSSet)
            }
            """,
            context: """
                final class Department: ManagedObject {}
                final class Employee: ManagedObject {}
                """,
            expands: [
                "{\n    mutableSetValue(forKey: \"employees\").add(value)\n}",
                "{\n    mutableSetValue(forKey: \"employees\").remove(value)\n}",
                "{\n    mutableSetValue(forKey: \"employees\").union(values)\n}",
                "{\n    mutableSetValue(forKey: \"employees\").minus(values)\n}",
            ])
    }

    @Test func orderedToManyAccessorsGetBodies() throws {
        try Self.expect(
            """
            extension Department {
                @ManagedAccessor public func insertIntoProjects(_ value: Project, at idx: Int)
                @ManagedAccessor public func removeFromProjects(at idx: Int)
                @ManagedAccessor public func insertIntoProjects(_ values: [Project], at indexes: NSIndexSet)
                @ManagedAccessor public func removeFromProjects(at indexes: NSIndexSet)
                @ManagedAccessor public func replaceProjects(at idx: Int, with value: Project)
                @ManagedAccessor public func replaceProjects(at indexes: NSIndexSet, with values: [Project])
                @ManagedAccessor public func addToProjects(_ values: NSOrderedSet)
                @ManagedAccessor public func removeFromProjects(_ values: NSOrderedSet)
                @ManagedAccessor("staff") func addToPeople(_ value: Employee)
                @ManagedAccessor public func addToURLs(_ value: Link)
            }
            """,
            context: """
                final class Department: ManagedObject {}
                final class Employee: ManagedObject {}
                final class Project: ManagedObject {}
                final class Link: ManagedObject {}
                """,
            expands: [
                "insert(value, at: idx)", "removeObject(at: idx)", "insert(values, at: indexes)",
                "removeObjects(at: indexes)", "replaceObject(at: idx, with: value)",
                "replaceObjects(at: indexes, with: values)", "union(values)", "minus(values)",
            ].map { "{\n    mutableOrderedSetValue(forKey: \"projects\").\($0)\n}" } + [
                "{\n    mutableSetValue(forKey: \"staff\").add(value)\n}",
                "{\n    mutableSetValue(forKey: \"uRLs\").add(value)\n}",
            ])
    }

    @Test func otherMethodsAndMethodsWithBodiesAreErrors() throws {
        try Self.expect(
            """
            extension Department {
                @ManagedAccessor func promote(_ value: Employee)
                @ManagedAccessor func addToEmployees(_ value: Employee) {}
            }
            """,
            context: """
                final class Department: ManagedObject {}
                final class Employee: ManagedObject {}
                """,
            expands: [],
            diagnostics: [
                .init(
                    line: 2, column: 27,
                    message: "@ManagedAccessor methods are Core Data's generated to-many accessors: addToX(_:), "
                        + "removeFromX(_:), insertIntoX(_:at:), removeFromX(at:), replaceX(at:with:)"),
                .init(
                    line: 3, column: 61, message: "@ManagedAccessor methods have no body: the macro supplies it"),
            ])
    }

    @Test func letAndNonLiteralNamesAreErrors() throws {
        let notVar = "@Managed properties are declared with 'var'"
        let keyNotLiteral = "the model name of a @Managed property is a non-empty string literal"
        try Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed let name: String
                @Managed(key) var title: String
            }
            """,
            context: "let key = \"title\"",
            expands: [],
            diagnostics: [
                .init(line: 2, column: 14, message: notVar), .init(line: 2, column: 14, message: notVar),
                .init(line: 3, column: 14, message: keyNotLiteral), .init(line: 3, column: 14, message: keyNotLiteral),
            ])
    }

    @Test func propertyOfAGenericClassPassesNoSlotHint() throws {
        try Self.expect(
            """
            final class Box<Content>: ManagedObject {
                @Managed var name: String
            }
            """,
            expands: [
                Self.accessors(key: "name", holder: nil),
                Self.declaration(of: "name", in: "Box", key: "name", stored: false)
                    + "\n\nprivate let __strataManaged_name = __StrataManaged_name()",
            ])
    }
}
