import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

@testable import StrataMacroImplementations

/// The `@Managed` macro's expansion: accessors by model name, the declaration of the key path,
/// and the errors it reports for properties it cannot manage.
@Suite struct ManagedMacroTests {
    static let macros: [String: MacroSpec] = [
        "Managed": MacroSpec(type: ManagedMacro.self), "ManagedAccessor": MacroSpec(type: ManagedAccessorMacro.self),
    ]

    static func expect(
        _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        assertMacroExpansion(
            source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
            failureHandler: { Issue.record(Comment(rawValue: $0.message), sourceLocation: sourceLocation) })
    }

    @Test func propertyReadsAndWritesItsModelPropertyAndDeclaresItsKeyPath() {
        Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed var name: String
            }
            """,
            expands: """
                final class Employee: ManagedObject {
                    var name: String {
                        get {
                            _managedValue(forKey: "name", hint: __StrataManaged_name.slotHint)
                        }
                        set {
                            _setManagedValue(newValue, forKey: "name", hint: __StrataManaged_name.slotHint)
                        }
                    }

                    private struct __StrataManaged_name: _ManagedPropertyDeclaration {
                        static var keyPath: AnyKeyPath {
                            \\Employee.name
                        }
                        static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                            (root as? any (Employee & _ManagedKeyPathRoot).Type).map {
                                keyPath(of: $0)
                            }
                        }
                        private static func keyPath<Root: Employee>(of _: Root.Type) -> AnyKeyPath {
                            \\Root.name
                        }
                        static var modelName: String {
                            "name"
                        }
                        static let slotHint = _ManagedSlotHint()
                    }

                    private let __strataManaged_name = __StrataManaged_name()
                }
                """)
    }

    @Test func explicitModelNameIsUsedForAccessAndDeclaration() {
        Self.expect(
            """
            final class Badge: ManagedObject {
                @Managed("title") var label: String?
            }
            """,
            expands: """
                final class Badge: ManagedObject {
                    var label: String? {
                        get {
                            _managedValue(forKey: "title", hint: __StrataManaged_label.slotHint)
                        }
                        set {
                            _setManagedValue(newValue, forKey: "title", hint: __StrataManaged_label.slotHint)
                        }
                    }

                    private struct __StrataManaged_label: _ManagedPropertyDeclaration {
                        static var keyPath: AnyKeyPath {
                            \\Badge.label
                        }
                        static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                            (root as? any (Badge & _ManagedKeyPathRoot).Type).map {
                                keyPath(of: $0)
                            }
                        }
                        private static func keyPath<Root: Badge>(of _: Root.Type) -> AnyKeyPath {
                            \\Root.label
                        }
                        static var modelName: String {
                            "title"
                        }
                        static let slotHint = _ManagedSlotHint()
                    }

                    private let __strataManaged_label = __StrataManaged_label()
                }
                """)
    }

    @Test func nestedClassAndEscapedNameAreSpelledInTheKeyPath() {
        Self.expect(
            """
            enum Catalog {
                final class Item: ManagedObject {
                    @Managed var `default`: Set<Item>
                }
            }
            """,
            expands: """
                enum Catalog {
                    final class Item: ManagedObject {
                        var `default`: Set<Item> {
                            get {
                                _managedValue(forKey: "default", hint: __StrataManaged_default.slotHint)
                            }
                            set {
                                _setManagedValue(newValue, forKey: "default", hint: __StrataManaged_default.slotHint)
                            }
                        }

                        private struct __StrataManaged_default: _ManagedPropertyDeclaration {
                            static var keyPath: AnyKeyPath {
                                \\Catalog.Item.`default`
                            }
                            static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                                (root as? any (Catalog.Item & _ManagedKeyPathRoot).Type).map {
                                    keyPath(of: $0)
                                }
                            }
                            private static func keyPath<Root: Catalog.Item>(of _: Root.Type) -> AnyKeyPath {
                                \\Root.`default`
                            }
                            static var modelName: String {
                                "default"
                            }
                            static let slotHint = _ManagedSlotHint()
                        }

                        private let __strataManaged_default = __StrataManaged_default()
                    }
                }
                """)
    }

    @Test func initialValueIsAnError() {
        Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed var salary: Int64 = 0
            }
            """,
            expands: """
                final class Employee: ManagedObject {
                    var salary: Int64 = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: ManagedMacroError.initialValue.message, line: 2, column: 32),
                DiagnosticSpec(message: ManagedMacroError.initialValue.message, line: 2, column: 32),
            ])
    }

    @Test func propertyInAnExtensionDeclaresItsKeyPathWithoutAStoredHolder() {
        Self.expect(
            """
            extension Employee {
                @Managed public var nickname: String?
            }
            """,
            expands: """
                extension Employee {
                    public var nickname: String? {
                        get {
                            _managedValue(forKey: "nickname", hint: nil)
                        }
                        set {
                            _setManagedValue(newValue, forKey: "nickname", hint: nil)
                        }
                    }

                    private struct __StrataManaged_nickname: _ManagedPropertyDeclaration {
                        static var keyPath: AnyKeyPath {
                            \\Employee.nickname
                        }
                        static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                            (root as? any (Employee & _ManagedKeyPathRoot).Type).map {
                                keyPath(of: $0)
                            }
                        }
                        private static func keyPath<Root: Employee>(of _: Root.Type) -> AnyKeyPath {
                            \\Root.nickname
                        }
                        static var modelName: String {
                            "nickname"
                        }
                    }
                }
                """)
    }

    @Test func propertyOutsideAClassOrExtensionIsAnError() {
        Self.expect(
            """
            struct Employee {
                @Managed var nickname: String?
            }
            """,
            expands: """
                struct Employee {
                    var nickname: String? {
                        get {
                            _managedValue(forKey: "nickname", hint: nil)
                        }
                        set {
                            _setManagedValue(newValue, forKey: "nickname", hint: nil)
                        }
                    }
                }
                """,
            diagnostics: [DiagnosticSpec(message: ManagedMacroError.notInClass.message, line: 2, column: 5)])
    }

    /// Xcode's generated accessors of an unordered to-many relationship, as ported (`@objc(...)`
    /// lines deleted, `@NSManaged` → `@Managed`).
    @Test func unorderedToManyAccessorsGetBodies() {
        Self.expect(
            """
            extension Department {
                @ManagedAccessor public func addToEmployees(_ value: Employee)
                @ManagedAccessor public func removeFromEmployees(_ value: Employee)
                @ManagedAccessor public func addToEmployees(_ values: NSSet)
                @ManagedAccessor public func removeFromEmployees(_ values: NSSet)
            }
            """,
            expands: """
                extension Department {
                    public func addToEmployees(_ value: Employee) {
                        mutableSetValue(forKey: "employees").add(value)
                    }
                    public func removeFromEmployees(_ value: Employee) {
                        mutableSetValue(forKey: "employees").remove(value)
                    }
                    public func addToEmployees(_ values: NSSet) {
                        mutableSetValue(forKey: "employees").union(values)
                    }
                    public func removeFromEmployees(_ values: NSSet) {
                        mutableSetValue(forKey: "employees").minus(values)
                    }
                }
                """)
    }

    @Test func orderedToManyAccessorsGetBodies() {
        Self.expect(
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
            expands: """
                extension Department {
                    public func insertIntoProjects(_ value: Project, at idx: Int) {
                        mutableOrderedSetValue(forKey: "projects").insert(value, at: idx)
                    }
                    public func removeFromProjects(at idx: Int) {
                        mutableOrderedSetValue(forKey: "projects").removeObject(at: idx)
                    }
                    public func insertIntoProjects(_ values: [Project], at indexes: NSIndexSet) {
                        mutableOrderedSetValue(forKey: "projects").insert(values, at: indexes)
                    }
                    public func removeFromProjects(at indexes: NSIndexSet) {
                        mutableOrderedSetValue(forKey: "projects").removeObjects(at: indexes)
                    }
                    public func replaceProjects(at idx: Int, with value: Project) {
                        mutableOrderedSetValue(forKey: "projects").replaceObject(at: idx, with: value)
                    }
                    public func replaceProjects(at indexes: NSIndexSet, with values: [Project]) {
                        mutableOrderedSetValue(forKey: "projects").replaceObjects(at: indexes, with: values)
                    }
                    public func addToProjects(_ values: NSOrderedSet) {
                        mutableOrderedSetValue(forKey: "projects").union(values)
                    }
                    public func removeFromProjects(_ values: NSOrderedSet) {
                        mutableOrderedSetValue(forKey: "projects").minus(values)
                    }
                    func addToPeople(_ value: Employee) {
                        mutableSetValue(forKey: "staff").add(value)
                    }
                    public func addToURLs(_ value: Link) {
                        mutableSetValue(forKey: "uRLs").add(value)
                    }
                }
                """)
    }

    @Test func otherMethodsAndMethodsWithBodiesAreErrors() {
        Self.expect(
            """
            extension Department {
                @ManagedAccessor func promote(_ value: Employee)
                @ManagedAccessor func addToEmployees(_ value: Employee) {}
            }
            """,
            expands: """
                extension Department {
                    func promote(_ value: Employee)
                    func addToEmployees(_ value: Employee) {}
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: ManagedMacroError.notAccessorMethod.message, line: 2, column: 27),
                DiagnosticSpec(message: ManagedMacroError.accessorMethodHasBody.message, line: 3, column: 61),
            ])
    }

    @Test func letAndNonLiteralNamesAreErrors() {
        Self.expect(
            """
            final class Employee: ManagedObject {
                @Managed let name: String
                @Managed(key) var title: String
            }
            """,
            expands: """
                final class Employee: ManagedObject {
                    let name: String
                    var title: String
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: ManagedMacroError.notVar.message, line: 2, column: 14),
                DiagnosticSpec(message: ManagedMacroError.notVar.message, line: 2, column: 14),
                DiagnosticSpec(message: ManagedMacroError.keyNotLiteral.message, line: 3, column: 14),
                DiagnosticSpec(message: ManagedMacroError.keyNotLiteral.message, line: 3, column: 14),
            ])
    }

    @Test func propertyOfAGenericClassPassesNoSlotHint() {
        Self.expect(
            """
            final class Box<Content>: ManagedObject {
                @Managed var name: String
            }
            """,
            expands: """
                final class Box<Content>: ManagedObject {
                    var name: String {
                        get {
                            _managedValue(forKey: "name", hint: nil)
                        }
                        set {
                            _setManagedValue(newValue, forKey: "name", hint: nil)
                        }
                    }

                    private struct __StrataManaged_name: _ManagedPropertyDeclaration {
                        static var keyPath: AnyKeyPath {
                            \\Box.name
                        }
                        static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                            (root as? any (Box & _ManagedKeyPathRoot).Type).map {
                                keyPath(of: $0)
                            }
                        }
                        private static func keyPath<Root: Box>(of _: Root.Type) -> AnyKeyPath {
                            \\Root.name
                        }
                        static var modelName: String {
                            "name"
                        }
                    }

                    private let __strataManaged_name = __StrataManaged_name()
                }
                """)
    }
}
