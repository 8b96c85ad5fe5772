import StrataMacroImplementations
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plug-in that provides Strata's macros.
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ManagedMacro.self, ManagedAccessorMacro.self]
}

// The compiler finds a macro by the module its type is declared in (`#externalMacro(module:
// "StrataMacros", type: "ManagedMacro")`), so the plug-in declares the types and forwards to
// StrataMacroImplementations, a plain library that the macro tests use without the plug-in.

/// `@Managed`: ``StrataMacroImplementations/ManagedMacro`` expands it.
struct ManagedMacro: AccessorMacro, PeerMacro {
    static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try StrataMacroImplementations.ManagedMacro.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }

    static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try StrataMacroImplementations.ManagedMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@ManagedAccessor`: ``StrataMacroImplementations/ManagedAccessorMacro`` expands it.
struct ManagedAccessorMacro: BodyMacro {
    static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        try StrataMacroImplementations.ManagedAccessorMacro.expansion(
            of: node, providingBodyFor: declaration, in: context)
    }
}
