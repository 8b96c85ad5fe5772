/// How a fetch index element orders its values (Core Data's `NSFetchIndexElementType`). `Sendable`.
public enum FetchIndexElementType: UInt, Sendable, Hashable, CaseIterable {
    /// An ordinary ordered (B-tree) index over the values' binary order.
    case binary = 0
    /// A spatial (R-tree) index, for range queries over two-dimensional values.
    case rTree = 1

    /// The name Xcode writes in a fetch index element's `type` XML attribute.
    var xmlName: String {
        switch self {
        case .binary: "Binary"
        case .rTree: "RTree"
        }
    }

    /// The type whose Xcode XML name is `xmlName`, if any.
    init?(xmlName: String) {
        guard let type = Self.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = type
    }
}
