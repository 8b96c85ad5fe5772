import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Managed var name: String` and `@Managed("title") var name: String`: Core Data's
/// `@NSManaged`, on properties in a class body or in an extension of the class.
///
/// The accessors read and write through the object by the literal model name, with the slot
/// found last time as a hint (checked against the name, so no name is hashed while it holds).
/// The peers declare the property's key path, model name and slot hint in a nested type, held
/// by a zero-size stored property so that the library finds every `@Managed` property of a
/// class from the class's field metadata, with no instance:
///
/// ```swift
/// private struct __StrataManaged_name: _ManagedPropertyDeclaration {
///     static var keyPath: AnyKeyPath { \Employee.name }
///     static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? { … \Root.name … }
///     static var modelName: String { "title" }
///     static let slotHint = _ManagedSlotHint()
/// }
/// private let __strataManaged_name = __StrataManaged_name()
/// ```
///
/// In an extension, which cannot hold stored properties, the nested type is declared alone (and
/// keeps no slot hint); the library finds it among the images' type records.
struct ManagedMacro: AccessorMacro, PeerMacro {
    static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = try ManagedProperty(node, declaration) else { return [] }
        let hint: ExprSyntax = holdsSlotHint(context) ? "__StrataManaged_\(raw: property.name).slotHint" : "nil"
        return [
            "get { _managedValue(forKey: \(literal: property.modelName), hint: \(hint)) }",
            "set { _setManagedValue(newValue, forKey: \(literal: property.modelName), hint: \(hint)) }",
        ]
    }

    static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = try ManagedProperty(node, declaration) else { return [] }
        let owner = try ownerType(of: declaration, in: context)
        let declarationType = "__StrataManaged_\(property.name)"
        let slotHint = holdsSlotHint(context) ? "\n    static let slotHint = _ManagedSlotHint()" : ""
        let inExtension = context.lexicalContext.first?.is(ExtensionDeclSyntax.self) == true
        let holder: [DeclSyntax] =
            inExtension ? [] : ["private let __strataManaged_\(raw: property.name) = \(raw: declarationType)()"]
        return [
            """
            private struct \(raw: declarationType): _ManagedPropertyDeclaration {
                static var keyPath: AnyKeyPath { \\\(raw: owner).\(raw: property.spelling) }
                static func keyPath(rootedAt root: any _ManagedKeyPathRoot.Type) -> AnyKeyPath? {
                    (root as? any (\(raw: owner) & _ManagedKeyPathRoot).Type).map { keyPath(of: $0) }
                }
                private static func keyPath<Root: \(raw: owner)>(of _: Root.Type) -> AnyKeyPath { \\Root.\(raw: property.spelling) }
                static var modelName: String { \(literal: property.modelName) }\(raw: slotHint)
            }
            """
        ] + holder
    }

    /// Whether the declaration type can hold a slot hint: a static stored property, which a type
    /// nested in a generic type cannot have (the accessors then pass no hint), nor one outside a
    /// class body.
    static func holdsSlotHint(_ context: some MacroExpansionContext) -> Bool {
        guard context.lexicalContext.first?.is(ClassDeclSyntax.self) == true else { return false }
        return !context.lexicalContext.contains { enclosing in
            enclosing.as(ClassDeclSyntax.self)?.genericParameterClause != nil
                || enclosing.as(StructDeclSyntax.self)?.genericParameterClause != nil
                || enclosing.as(EnumDeclSyntax.self)?.genericParameterClause != nil
                || enclosing.as(ActorDeclSyntax.self)?.genericParameterClause != nil
                || enclosing.is(ExtensionDeclSyntax.self) || enclosing.is(FunctionDeclSyntax.self)
        }
    }

    /// The name of the class the property is declared in (`Outer.Employee` when nested), from
    /// the macro's lexical context.
    ///
    /// - Throws: ``ManagedMacroError/notInClass`` outside a class body or an extension.
    static func ownerType(
        of declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> String {
        var names: [String] = []
        for enclosing in context.lexicalContext {
            if names.isEmpty, let type = enclosing.as(ExtensionDeclSyntax.self) {
                // The extended type as written: `Employee`, or `Outer.Employee`.
                names.insert(type.extendedType.trimmedDescription, at: 0)
                break
            } else if let type = enclosing.as(ClassDeclSyntax.self) {
                names.insert(type.name.text, at: 0)
            } else if names.isEmpty {
                throw DiagnosticsError(diagnostics: [
                    Diagnostic(node: declaration, message: ManagedMacroError.notInClass)
                ])
            } else if let type = enclosing.as(StructDeclSyntax.self) {
                names.insert(type.name.text, at: 0)
            } else if let type = enclosing.as(EnumDeclSyntax.self) {
                names.insert(type.name.text, at: 0)
            } else if let type = enclosing.as(ActorDeclSyntax.self) {
                names.insert(type.name.text, at: 0)
            } else if let type = enclosing.as(ExtensionDeclSyntax.self) {
                names.insert(type.extendedType.trimmedDescription, at: 0)
                break
            } else {
                break
            }
        }
        guard !names.isEmpty else {
            throw DiagnosticsError(diagnostics: [Diagnostic(node: declaration, message: ManagedMacroError.notInClass)])
        }
        return names.joined(separator: ".")
    }
}

/// What `@Managed` reads of the property it is attached to.
struct ManagedProperty {
    /// The Swift property's name.
    let name: String
    /// The Swift property's name as written (with its backticks, if any).
    let spelling: String
    /// The model property's name: the attribute's argument, else the Swift name.
    let modelName: String

    /// The property `declaration` declares, or `nil` when it is not a variable (the compiler
    /// reports attaching an accessor macro elsewhere).
    ///
    /// - Throws: a diagnostic when the property is not one `@Managed` can manage.
    init?(_ node: AttributeSyntax, _ declaration: some DeclSyntaxProtocol) throws {
        guard let variable = declaration.as(VariableDeclSyntax.self) else { return nil }
        func fail(_ message: ManagedMacroError, at node: some SyntaxProtocol) -> DiagnosticsError {
            DiagnosticsError(diagnostics: [Diagnostic(node: node, message: message)])
        }
        guard variable.bindingSpecifier.tokenKind == .keyword(.var) else {
            throw fail(.notVar, at: variable.bindingSpecifier)
        }
        if let modifier = variable.modifiers.first(where: {
            [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind)
        }) {
            throw fail(.notInstanceProperty, at: modifier)
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else { throw fail(.oneProperty, at: variable) }
        guard binding.typeAnnotation != nil else { throw fail(.missingType, at: binding) }
        if let initializer = binding.initializer { throw fail(.initialValue, at: initializer) }
        if let accessors = binding.accessorBlock { throw fail(.hasAccessors, at: accessors) }
        spelling = identifier.identifier.text
        name = spelling.hasPrefix("`") ? String(spelling.dropFirst().dropLast()) : spelling
        guard let arguments = node.arguments else {
            modelName = name
            return
        }
        guard let list = arguments.as(LabeledExprListSyntax.self), list.count == 1, let argument = list.first,
            argument.label == nil, let literal = argument.expression.as(StringLiteralExprSyntax.self),
            let key = literal.representedLiteralValue, !key.isEmpty
        else { throw fail(.keyNotLiteral, at: arguments) }
        modelName = key
    }
}

/// Why `@Managed` cannot manage a declaration.
enum ManagedMacroError: String, DiagnosticMessage {
    case notVar
    case notInstanceProperty
    case oneProperty
    case missingType
    case initialValue
    case hasAccessors
    case keyNotLiteral
    case notInClass
    case notAccessorMethod
    case accessorMethodHasBody

    var message: String {
        switch self {
        case .notVar: "@Managed properties are declared with 'var'"
        case .notInstanceProperty: "@Managed properties are stored instance properties of the object"
        case .oneProperty: "@Managed applies to one property, named by a plain identifier"
        case .missingType: "@Managed properties need a type annotation"
        case .initialValue: "@Managed properties take their default value from the model, not from an initial value"
        case .hasAccessors: "@Managed properties have no accessors of their own"
        case .keyNotLiteral: "the model name of a @Managed property is a non-empty string literal"
        case .notInClass: "@Managed properties are declared in a ManagedObject subclass or an extension of one"
        case .notAccessorMethod:
            "@ManagedAccessor methods are Core Data's generated to-many accessors: addToX(_:), removeFromX(_:), insertIntoX(_:at:), removeFromX(at:), replaceX(at:with:)"
        case .accessorMethodHasBody: "@ManagedAccessor methods have no body: the macro supplies it"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "StrataMacros", id: rawValue) }

    var severity: DiagnosticSeverity { .error }
}
