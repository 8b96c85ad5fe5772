/// A value that answers `FUNCTION(target, "selector:", …)` expressions
/// (``FetchExpression/method(of:selectorName:arguments:)``).
///
/// Core Data calls such a selector through the Objective-C runtime, which Linux does not have: a
/// target conforms instead and switches on the selector. ``MigrationManager`` answers the
/// selectors of Core Data's migration expressions (`$manager`), and an ``EntityMigrationPolicy``
/// subclass overrides ``EntityMigrationPolicy/value(forFunction:arguments:)`` for the custom
/// functions a mapping model calls on `$entityPolicy`.
public protocol ExpressionFunctionTarget: AnyObject {
    /// The value of the method `selectorName` called with `arguments`.
    ///
    /// - Parameters:
    ///   - selectorName: the selector, with its colons (`"fullNameForFirst:last:"`).
    ///   - arguments: the arguments' values, in order.
    /// - Returns: the value, or `nil`.
    /// - Throws: an error when the target has no such method or it fails; the expression's value
    ///   is then `nil`.
    func value(forFunction selectorName: String, arguments: [Any?]) throws -> Any?
}
