import StrataMacroImplementations
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plug-in that provides Strata's macros.
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ManagedMacro.self]
}

/// `@Managed`, as `#externalMacro(module: "StrataMacros", type: "ManagedMacro")` names it: the
/// compiler finds a macro by the module its type is declared in, so the plug-in declares the
/// type and ``StrataMacroImplementations/ManagedMacro`` (a plain library, tested without the
/// plug-in) expands it.
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
