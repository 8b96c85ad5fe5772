/// One stage of a staged migration (Core Data's `NSMigrationStage`): the base of
/// ``LightweightMigrationStage`` and ``CustomMigrationStage``; use those.
public class MigrationStage: Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A description of the stage's purpose, for people.
    public var label: String?

    init() {}

    /// The label, or the stage's kind.
    public var description: String { label ?? "\(type(of: self))" }

    /// The description.
    public var debugDescription: String { description }

    /// Whether two stages are the same object.
    public static func == (lhs: MigrationStage, rhs: MigrationStage) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
