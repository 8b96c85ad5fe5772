/// How a save resolves conflicts between the context's changes and changes another context
/// saved to the same objects since they were read (Core Data's `NSMergePolicy`). `Sendable`.
public struct MergePolicy: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of policy (Core Data's `NSMergePolicyType`).
    public enum PolicyType: Sendable, Hashable {
        /// The save fails with a merge conflict error (code 133020) listing the conflicts.
        case errorMergePolicyType
        /// Properties the context changed win; others take the stored values.
        case mergeByPropertyObjectTrumpMergePolicyType
        /// Properties changed in the store win; others keep the context's values.
        case mergeByPropertyStoreTrumpMergePolicyType
        /// The context's objects are saved as they are, overwriting the store.
        case overwriteMergePolicyType
        /// The context's changes to conflicting objects are discarded for the stored ones.
        case rollbackMergePolicyType
    }

    /// The policy's type.
    public let mergeType: PolicyType

    /// Creates a policy of `type` (Core Data's `init(merge:)`).
    public init(merge type: PolicyType) { mergeType = type }

    /// Fail on conflicts (the default).
    public static let error = MergePolicy(merge: .errorMergePolicyType)
    /// The context's changed properties win.
    public static let mergeByPropertyObjectTrump = MergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The store's changed properties win.
    public static let mergeByPropertyStoreTrump = MergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// The context's objects overwrite the store.
    public static let overwrite = MergePolicy(merge: .overwriteMergePolicyType)
    /// The store's objects win.
    public static let rollback = MergePolicy(merge: .rollbackMergePolicyType)

    /// The policy's name.
    public var description: String { "\(mergeType)" }
}
