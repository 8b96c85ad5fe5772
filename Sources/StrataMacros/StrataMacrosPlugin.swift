import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides Strata's macros.
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ManagedMacro.self, ManagedAccessorMacro.self]
}
