import Foundation

/// The kinds of merge policy (Core Data's `NSMergePolicyType`).
public enum MergePolicyType: UInt, Sendable, Hashable {
    /// The save fails with a merge error listing the conflicts (the default).
    case errorMergePolicyType = 0
    /// Properties changed in the store win; others keep the context's values.
    case mergeByPropertyStoreTrumpMergePolicyType = 1
    /// Properties the context changed win; others take the stored values.
    case mergeByPropertyObjectTrumpMergePolicyType = 2
    /// The context's objects are saved as they are, overwriting the store.
    case overwriteMergePolicyType = 3
    /// The context's changes to conflicting objects are discarded for the stored ones.
    case rollbackMergePolicyType = 4
}

/// How a save resolves conflicts (Core Data's `NSMergePolicy`): optimistic-locking conflicts,
/// where another context saved an object since this context read it, and uniqueness-constraint
/// conflicts, where objects of the save share constrained values with each other or with a
/// stored object.
///
/// Subclass it and override ``resolve(optimisticLockingConflicts:)`` or
/// ``resolve(constraintConflicts:)`` to resolve conflicts yourself; call `super` for the
/// policy's own resolution.
///
/// Constraint conflicts under each policy: `.error` throws `managedObjectConstraintMerge`
/// (133021); the others keep one object per conflict — the stored one if there is one, else the
/// first inserted — merge the others' values into it and delete them, redirecting their
/// relationships to it (an upsert). `.mergeByPropertyObjectTrump` takes the properties the other
/// objects set, `.overwrite` all their properties, `.mergeByPropertyStoreTrump` only those the
/// kept object has no value for, and `.rollback` none.
open class MergePolicy: NSObject {
    /// The policy's type.
    public let mergeType: MergePolicyType

    /// Creates a policy of `type` (Core Data's `init(merge:)`).
    public init(merge type: MergePolicyType) { mergeType = type }

    /// Fail on conflicts (the default).
    public class var error: MergePolicy { MergePolicy(merge: .errorMergePolicyType) }
    /// The context's changed properties win.
    public class var mergeByPropertyObjectTrump: MergePolicy {
        MergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    }
    /// The store's changed properties win.
    public class var mergeByPropertyStoreTrump: MergePolicy {
        MergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    }
    /// The context's objects overwrite the store.
    public class var overwrite: MergePolicy { MergePolicy(merge: .overwriteMergePolicyType) }
    /// The store's objects win.
    public class var rollback: MergePolicy { MergePolicy(merge: .rollbackMergePolicyType) }

    /// Resolves the conflicts of a save with changes other contexts saved meanwhile (Core
    /// Data's `resolve(optimisticLockingConflicts:)`). On return, the save writes each
    /// conflicting object's current values; an object whose row was deleted is not written.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectMerge` (133020) under ``error``, with one
    ///   detailed error per conflict.
    open func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
        for conflict in list {
            switch mergeType {
            case .errorMergePolicyType, .overwriteMergePolicyType:
                continue
            case .mergeByPropertyObjectTrumpMergePolicyType:
                conflict.takeStoredSnapshot(keeping: conflict.objectChangedSlots)
            case .mergeByPropertyStoreTrumpMergePolicyType:
                conflict.takeStoredSnapshot(
                    keeping: conflict.objectChangedSlots.subtracting(conflict.storeChangedSlots))
            case .rollbackMergePolicyType:
                conflict.takeStoredSnapshot(keeping: [])
            }
        }
        guard mergeType == .errorMergePolicyType, !list.isEmpty else { return }
        throw CoreDataError(
            .managedObjectMerge, "the save conflicts with changes saved by others", detailedErrors: list.map(\.error))
    }

    /// Resolves the uniqueness-constraint conflicts of a save (Core Data's
    /// `resolve(constraintConflicts:)`). The save checks the constraints again afterwards and
    /// fails if a conflict remains.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectConstraintMerge` (133021) under ``error``, with
    ///   one detailed error per object in conflict.
    open func resolve(constraintConflicts list: [ConstraintConflict]) throws {
        guard mergeType != .errorMergePolicyType else {
            guard !list.isEmpty else { return }
            throw ConstraintConflict.error(for: list)
        }
        for conflict in list { try conflict.merge(mergeType) }
    }

    /// Both conflict kinds at once (Core Data's `resolve(mergeConflicts:)`): the
    /// ``MergeConflict``s and the ``ConstraintConflict``s of `list`, in that order.
    ///
    /// - Throws: what the two resolutions throw.
    open func resolve(mergeConflicts list: [Any]) throws {
        try resolve(optimisticLockingConflicts: list.compactMap { $0 as? MergeConflict })
        try resolve(constraintConflicts: list.compactMap { $0 as? ConstraintConflict })
    }

    /// Whether `object` is a merge policy of the same class and type.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? MergePolicy else { return false }
        return type(of: other) == type(of: self) && other.mergeType == mergeType
    }

    /// A hash of the policy's type.
    open override var hash: Int { Int(mergeType.rawValue) }

    /// The policy's type.
    open override var description: String { "\(mergeType)" }
}

/// Fail on conflicts (Core Data's `NSErrorMergePolicy`).
public var ErrorMergePolicy: MergePolicy { .error }
/// The store's changed properties win (Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`).
public var MergeByPropertyStoreTrumpMergePolicy: MergePolicy { .mergeByPropertyStoreTrump }
/// The context's changed properties win (Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`).
public var MergeByPropertyObjectTrumpMergePolicy: MergePolicy { .mergeByPropertyObjectTrump }
/// The context's objects overwrite the store (Core Data's `NSOverwriteMergePolicy`).
public var OverwriteMergePolicy: MergePolicy { .overwrite }
/// The store's objects win (Core Data's `NSRollbackMergePolicy`).
public var RollbackMergePolicy: MergePolicy { .rollback }
