/// What happens to the objects at the other end of a relationship when its source object is
/// deleted (Core Data's `NSDeleteRule`). `Sendable`.
public enum DeleteRule: UInt, Sendable, Hashable, CaseIterable {
    /// Do nothing to the destination objects; they may be left pointing at the deleted object.
    case noActionDeleteRule = 0
    /// Remove the deleted object from the destination objects' inverse relationship.
    case nullifyDeleteRule = 1
    /// Delete the destination objects too.
    case cascadeDeleteRule = 2
    /// Refuse to delete the source object while the relationship holds any object.
    case denyDeleteRule = 3

    /// The name Xcode writes in a relationship's `deletionRule` XML attribute.
    var xmlName: String {
        switch self {
        case .noActionDeleteRule: "No Action"
        case .nullifyDeleteRule: "Nullify"
        case .cascadeDeleteRule: "Cascade"
        case .denyDeleteRule: "Deny"
        }
    }

    /// The rule whose Xcode XML name is `xmlName`, if any.
    init?(xmlName: String) {
        guard let rule = Self.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = rule
    }
}
