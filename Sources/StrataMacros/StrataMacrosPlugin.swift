import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides Strata's macros. The compiler finds a macro by the module
/// its type is declared in (`#externalMacro(module: "StrataMacros", type: "ManagedMacro")`).
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ManagedMacro.self, ManagedAccessorMacro.self]
}
