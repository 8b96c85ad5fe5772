import Foundation
import StrataTestSupport

/// A piece of source type-checked by the Swift compiler against the built `Strata` module, with
/// the `@Managed` macros loaded from the built plugin, as a user's code is: what each macro
/// expanded to and the errors it reported.
///
/// The compiler drives the macro here instead of swift-syntax's test support, so the tests need no
/// second build of swift-syntax for the test target, and every expansion is also checked against
/// the library it calls into.
struct MacroCompilation {
    /// One macro expansion: the text the compiler put in place of (or beside) a declaration.
    struct Expansion: Equatable, CustomStringConvertible {
        /// The expanded text, without the compiler's separators.
        var text: String
        var description: String { text }
    }

    /// An error a macro reported: where in the source and what it says.
    struct Diagnostic: Comparable, CustomStringConvertible {
        /// The line in the source passed to ``init(_:context:)``, from 1.
        var line: Int
        /// The column, from 1.
        var column: Int
        /// The message, without the compiler's "(from macro …)" suffix.
        var message: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.line, lhs.column, lhs.message) < (rhs.line, rhs.column, rhs.message)
        }

        var description: String { "\(line):\(column): \(message)" }
    }

    /// What the macros expanded to, in the order the compiler printed them.
    let expansions: [Expansion]
    /// The errors reported by the macros, sorted by position.
    let diagnostics: [Diagnostic]

    /// Type-checks `source` in a file that imports Foundation and Strata on its first line and
    /// declares `context` after it, so `source`'s lines are numbered from 1.
    init(_ source: String, context: String = "") throws {
        let folder = TemporaryDirectory()
        let file = try folder.write("import Foundation; import Strata\n\(source)\n\(context)\n", to: "Source.swift")
        let products = try BuiltExecutable.url(named: "StrataMacros-tool").deletingLastPathComponent()
        let supportMap = products.appendingPathComponent("CStrataSupport.build/module.modulemap").path
        let lz4Map = Self.packageRoot.appendingPathComponent("Sources/CLZ4/module.modulemap").path
        let plugin = products.appendingPathComponent("StrataMacros-tool").path
        // A module name of its own: the compiler names the files it writes for errors inside an
        // expansion after the module, and other tests compile at the same time.
        let module = "MacroTest" + UUID().uuidString.filter(\.isHexDigit)
        let arguments = [
            "-typecheck", "-module-name", module, "-diagnostic-style", "llvm",
            "-I", products.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=" + supportMap, "-Xcc", "-fmodule-map-file=" + lz4Map,
            "-load-plugin-executable", plugin + "#StrataMacros", "-Xfrontend", "-dump-macro-expansions", file.path,
        ]
        let errors = folder.url.appendingPathComponent("stderr.txt").path
        _ = try ChildProcess.run(try Self.compiler(), arguments, stderrPath: errors)
        let output = try String(contentsOfFile: errors, encoding: .utf8)
        expansions = Self.expansions(in: output)
        diagnostics = Self.diagnostics(in: output, file: file.path)
        guard !expansions.isEmpty || !diagnostics.isEmpty else { throw NothingExpanded(output: output) }
    }

    /// The expansions in the compiler's dump: each is a buffer name (`@__swiftmacro_…`), a line of
    /// dashes, the text, and a line of dashes.
    private static func expansions(in output: String) -> [Expansion] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        var found: [Expansion] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("@__swiftmacro_"), index + 1 < lines.count, isSeparator(lines[index + 1])
            else {
                index += 1
                continue
            }
            guard let end = lines[(index + 2)...].firstIndex(where: isSeparator) else { break }
            found.append(Expansion(text: lines[(index + 2)..<end].joined(separator: "\n")))
            index = end + 1
        }
        return found
    }

    /// The compiler's separator line around an expansion.
    private static func isSeparator(_ line: Substring) -> Bool {
        line.count >= 10 && line.allSatisfy { $0 == "-" }
    }

    /// The macros' errors in `file`: `path:line:column: error: message (from macro 'Name ')`.
    private static func diagnostics(in output: String, file: String) -> [Diagnostic] {
        output.split(separator: "\n").compactMap { line -> Diagnostic? in
            guard line.hasPrefix(file + ":"), let from = line.range(of: " (from macro '") else { return nil }
            let fields = line[line.index(line.startIndex, offsetBy: file.count + 1)..<from.lowerBound]
                .split(separator: ":", maxSplits: 3)
            guard fields.count == 4, let line = Int(fields[0]), let column = Int(fields[1]), fields[2] == " error"
            else {
                return nil
            }
            return Diagnostic(line: line - 1, column: column, message: String(fields[3].dropFirst()))
        }.sorted()
    }

    /// The package's root, two folders above this file.
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `swiftc` from `PATH`, the toolchain `swift test` runs from.
    private static func compiler() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/swiftc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw NoCompiler(path: path)
    }

    /// `swiftc` is not on `PATH`.
    struct NoCompiler: Error, CustomStringConvertible {
        var path: String
        var description: String { "swiftc was not found on PATH (\(path))" }
    }

    /// The compiler printed neither an expansion nor a macro's error: the output says why.
    struct NothingExpanded: Error, CustomStringConvertible {
        var output: String
        var description: String { "the compiler expanded no macro:\n\(output)" }
    }
}
