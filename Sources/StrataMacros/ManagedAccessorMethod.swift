import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ManagedAccessor public func addToEmployees(_ value: Employee)`: Core Data's `@NSManaged` on
/// the to-many accessor methods Xcode generates, given a body (see ``ManagedAccessorMethod``).
struct ManagedAccessorMacro: BodyMacro {
    static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self) else { return [] }
        return [try ManagedAccessorMethod(node, function).body]
    }
}

/// A to-many accessor method as Xcode generates it for a relationship `employees` (Core Data's
/// `@NSManaged public func addToEmployees(_ value: Employee)`), and the body `@ManagedAccessor`
/// gives it: a call on the relationship's mutable proxy, as Core Data's dynamic accessors work.
///
/// The relationship's key comes from the method's name as Core Data derives it from the
/// selector: the name after `addTo`, `removeFrom`, `insertInto` or `replace`, with its first
/// letter lowercased (`addToEmployees` → `employees`), unless the attribute names it
/// (`@ManagedAccessor("staff")`). Which accessor it is comes from the parameters' labels and types:
///
/// | method | body |
/// |---|---|
/// | `addToX(_ value: T)` | `mutableSetValue(forKey: "x").add(value)` |
/// | `removeFromX(_ value: T)` | `mutableSetValue(forKey: "x").remove(value)` |
/// | `addToX(_ values: NSSet)` / `NSOrderedSet` | `mutableSetValue(forKey: "x").union(values)` / `mutableOrderedSetValue` |
/// | `removeFromX(_ values: NSSet)` / `NSOrderedSet` | `….minus(values)` |
/// | `insertIntoX(_ value: T, at idx: Int)` | `mutableOrderedSetValue(forKey: "x").insert(value, at: idx)` |
/// | `insertIntoX(_ values: [T], at indexes: NSIndexSet)` | `….insert(values, at: indexes)` |
/// | `removeFromX(at idx: Int)` | `….removeObject(at: idx)` |
/// | `removeFromX(at indexes: NSIndexSet)` | `….removeObjects(at: indexes)` |
/// | `replaceX(at idx: Int, with value: T)` | `….replaceObject(at: idx, with: value)` |
/// | `replaceX(at indexes: NSIndexSet, with values: [T])` | `….replaceObjects(at: indexes, with: values)` |
struct ManagedAccessorMethod {
    /// The statement the method's body is.
    let body: CodeBlockItemSyntax

    /// The accessor `function` declares.
    ///
    /// - Throws: a diagnostic when the function has a body, or is not one of the accessors above.
    init(_ node: AttributeSyntax, _ function: FunctionDeclSyntax) throws {
        func fail(_ message: ManagedMacroError, at node: some SyntaxProtocol) -> DiagnosticsError {
            DiagnosticsError(diagnostics: [Diagnostic(node: node, message: message)])
        }
        if let body = function.body { throw fail(.accessorMethodHasBody, at: body) }
        let name = function.name.text
        let parameters = Array(function.signature.parameterClause.parameters)
        guard let (verb, suffix) = Self.split(name), let first = parameters.first else {
            throw fail(.notAccessorMethod, at: function.name)
        }
        let key: String
        if let arguments = node.arguments {
            guard let list = arguments.as(LabeledExprListSyntax.self), list.count == 1, let argument = list.first,
                argument.label == nil, let literal = argument.expression.as(StringLiteralExprSyntax.self),
                let value = literal.representedLiteralValue, !value.isEmpty
            else { throw fail(.keyNotLiteral, at: arguments) }
            key = value
        } else {
            key = suffix.prefix(1).lowercased() + suffix.dropFirst()
        }
        let set: ExprSyntax = "mutableSetValue(forKey: \(literal: key))"
        let ordered: ExprSyntax = "mutableOrderedSetValue(forKey: \(literal: key))"
        let a = Self.name(of: first)
        let call: ExprSyntax
        switch (verb, parameters.count, first.firstName.text, parameters.dropFirst().first?.firstName.text) {
        case ("addTo", 1, "_", nil):
            if Self.isCollection(first.type) {
                call = "\(Self.isOrdered(first.type) ? ordered : set).union(\(a))"
            } else {
                call = "\(set).add(\(a))"
            }
        case ("removeFrom", 1, "_", nil):
            if Self.isCollection(first.type) {
                call = "\(Self.isOrdered(first.type) ? ordered : set).minus(\(a))"
            } else {
                call = "\(set).remove(\(a))"
            }
        case ("removeFrom", 1, "at", nil):
            call = Self.isIndex(first.type) ? "\(ordered).removeObject(at: \(a))" : "\(ordered).removeObjects(at: \(a))"
        case ("insertInto", 2, "_", "at"):
            call = "\(ordered).insert(\(a), at: \(Self.name(of: parameters[1])))"
        case ("replace", 2, "at", "with"):
            let b = Self.name(of: parameters[1])
            call =
                Self.isIndex(first.type)
                ? "\(ordered).replaceObject(at: \(a), with: \(b))" : "\(ordered).replaceObjects(at: \(a), with: \(b))"
        default:
            throw fail(.notAccessorMethod, at: function.name)
        }
        body = CodeBlockItemSyntax(item: .expr(call))
    }

    /// The accessor's verb and the capitalized relationship name after it.
    private static func split(_ name: String) -> (verb: String, suffix: Substring)? {
        for verb in ["addTo", "removeFrom", "insertInto", "replace"] where name.hasPrefix(verb) {
            let suffix = name.dropFirst(verb.count)
            guard let initial = suffix.first, initial.isUppercase || initial == "_" else { continue }
            return (verb, suffix)
        }
        return nil
    }

    /// The name a parameter is used by in the body.
    private static func name(of parameter: FunctionParameterSyntax) -> ExprSyntax {
        "\(raw: (parameter.secondName ?? parameter.firstName).text)"
    }

    /// The parameter type's name, without optionality.
    private static func typeName(_ type: TypeSyntax) -> String {
        var text = type.trimmedDescription
        while text.hasSuffix("?") || text.hasSuffix("!") { text.removeLast() }
        return text.hasPrefix("Foundation.") ? String(text.dropFirst("Foundation.".count)) : text
    }

    /// Whether the type holds several objects (`NSSet`, `NSOrderedSet`, `Set<T>`, `[T]`).
    private static func isCollection(_ type: TypeSyntax) -> Bool {
        let name = typeName(type)
        return ["NSSet", "NSOrderedSet", "NSMutableSet", "NSMutableOrderedSet"].contains(name) || name.hasPrefix("Set<")
            || name.hasPrefix("[") || name.hasPrefix("Array<")
    }

    /// Whether a collection type keeps an order (`NSOrderedSet`, `[T]`).
    private static func isOrdered(_ type: TypeSyntax) -> Bool {
        let name = typeName(type)
        return name.hasSuffix("OrderedSet") || name.hasPrefix("[") || name.hasPrefix("Array<")
    }

    /// Whether an index parameter is one index (`Int`) rather than an index set.
    private static func isIndex(_ type: TypeSyntax) -> Bool {
        ["Int", "Swift.Int"].contains(typeName(type))
    }
}
