/// How one property of a destination object gets its value (Core Data's `NSPropertyMapping`).
///
/// The value expression is evaluated against the source object: an inferred mapping uses the
/// source property's key path (Core Data writes `$source.name`), and an attribute's value is
/// converted to the destination attribute's type. A relationship's source objects become the
/// destination objects migrated from them. Without an expression the destination keeps its
/// default value.
public final class PropertyMapping {
    /// The destination property's name.
    public var name: String?
    /// The expression whose value, for the source object, the property gets.
    public var valueExpression: FetchExpression?
    /// Anything the program keeps with the mapping.
    public var userInfo: [AnyHashable: Any]?

    /// Creates an empty mapping.
    public init() {}

    /// Creates a mapping of the property `name` to the value of `valueExpression`.
    public convenience init(name: String, valueExpression: FetchExpression?) {
        self.init()
        self.name = name
        self.valueExpression = valueExpression
    }

    /// The source key path of the value expression, if it reads one from the source object
    /// (`name`, `$source.name`, or `FUNCTION($source, "valueForKey:", "name")` as a compiled
    /// Core Data mapping model has it).
    var sourceKeyPath: String? {
        switch valueExpression {
        case .keyPath(let path, .evaluatedObject)?, .keyPath(let path, .variable("source"))?: return path
        case .method(.variable("source"), "valueForKey:", let arguments)?,
            .method(.variable("source"), "valueForKeyPath:", let arguments)?:
            guard arguments.count == 1, case .constant(let path as String) = arguments[0] else { return nil }
            return path
        default: return nil
        }
    }
}
