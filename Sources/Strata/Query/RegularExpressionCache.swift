import Foundation
import StrataSynchronization
import Synchronization

/// Compiled `MATCHES` patterns, shared by all evaluations so a fetch compiles each pattern once.
enum RegularExpressionCache {
    /// A compiled pattern; `NSRegularExpression` is immutable once made.
    private struct Entry: @unchecked Sendable {
        let expression: NSRegularExpression?
    }

    /// At most this many patterns are kept; the cache is emptied when it is full.
    private static let capacity = 256
    private static let entries = Lock<[String: Entry]>([:])

    /// The expression for `pattern` anchored at both ends (`MATCHES` compares whole strings),
    /// `nil` when the pattern is not a valid ICU regular expression. `[c]` makes it ignore
    /// case; `[d]` folds the pattern's diacritics as the subject's are.
    static func expression(_ pattern: String, options: ComparisonOptions) -> NSRegularExpression? {
        let key = "\(options.rawValue & 3):\(pattern)"
        if let entry = entries.withLock({ $0[key] }) { return entry.expression }
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        let source = options.contains(.diacriticInsensitive) ? FetchValue.fold(pattern, .diacriticInsensitive) : pattern
        // Wrapping an invalid pattern can make it valid (`)(`): check the pattern alone first.
        let compiled = (try? NSRegularExpression(pattern: source, options: regexOptions)).map { plain in
            (try? NSRegularExpression(pattern: #"\A(?:"# + source + #")\z"#, options: regexOptions)) ?? plain
        }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = Entry(expression: compiled)
        }
        return compiled
    }
}
