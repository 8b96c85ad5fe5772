import Foundation

/// An optimistic-locking conflict: an object the save changes or deletes whose stored row
/// another context changed or deleted since this context read it (Core Data's `NSMergeConflict`).
open class MergeConflict: NSObject {
    /// The object in conflict.
    public let sourceObject: ManagedObject
    /// The object's current values by property name (attributes and to-one relationships as
    /// object IDs; `NSNull` for nil).
    public let objectSnapshot: [String: Any]?
    /// The values the object was read with.
    public let cachedSnapshot: [String: Any]?
    /// The values stored now; `nil` when another context deleted the object.
    public let persistedSnapshot: [String: Any]?
    /// The store's sequence number now (Strata versions rows by the store's commit sequence).
    public let newVersionNumber: Int
    /// The store's sequence number when the object was read.
    public let oldVersionNumber: Int

    /// The stored values by slot (`nil`: the row was deleted), and the slots that differ from
    /// what the object was read with, for the policies' resolution.
    let stored: [Any?]?
    let storeChangedSlots: Set<Int>

    /// Creates a conflict (Core Data's `init(source:newVersion:oldVersion:cachedSnapshot:persistedSnapshot:)`).
    public init(
        source srcObject: ManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
        cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?
    ) {
        sourceObject = srcObject
        objectSnapshot = srcObject.isLoaded ? Self.snapshot(srcObject.values, of: srcObject.runtime) : nil
        cachedSnapshot = cachesnap
        persistedSnapshot = persnap
        newVersionNumber = newvers
        oldVersionNumber = oldvers
        stored = nil
        storeChangedSlots = []
    }

    init(object: ManagedObject, stored: [Any?]?, storeChangedSlots: Set<Int>, newVersion: UInt64) {
        sourceObject = object
        objectSnapshot = Self.snapshot(object.values, of: object.runtime)
        cachedSnapshot = object.committed.map { Self.snapshot($0, of: object.runtime) }
        persistedSnapshot = stored.map { Self.snapshot($0, of: object.runtime) }
        newVersionNumber = Int(clamping: newVersion)
        oldVersionNumber = Int(clamping: object.snapshotSequence)
        self.stored = stored
        self.storeChangedSlots = storeChangedSlots
    }

    /// The slots the context changed.
    var objectChangedSlots: Set<Int> { Set(sourceObject.changedSlots) }

    /// Gives the object the stored values of every persistent slot but `kept`, and makes the
    /// stored values the ones it was read with, so the save writes over them. Nothing when the
    /// row was deleted.
    func takeStoredSnapshot(keeping kept: Set<Int>) {
        guard let stored else { return }
        for slot in Self.persistentSlots(of: sourceObject.runtime) where !kept.contains(slot) {
            sourceObject.values[slot] = stored[slot]
        }
        sourceObject.committed = stored
    }

    /// The slots a conflict compares: attributes and to-one relationships that are not transient.
    static func persistentSlots(of runtime: EntityRuntime) -> [Int] {
        runtime.properties.indices.filter { slot in
            let property = runtime.properties[slot]
            return !property.isTransient && !((property as? RelationshipDescription)?.isToMany ?? false)
        }
    }

    /// Values by property name, as Core Data's snapshots hold them.
    static func snapshot(_ values: [Any?], of runtime: EntityRuntime) -> [String: Any] {
        var snapshot: [String: Any] = [:]
        for slot in persistentSlots(of: runtime) where slot < values.count {
            snapshot[runtime.properties[slot].name] = values[slot] ?? NSNull()
        }
        return snapshot
    }

    /// The error the `.error` policy reports for this conflict.
    var error: CoreDataError {
        let id = sourceObject.objectID
        let changed = storeChangedSlots.sorted().map { sourceObject.runtime.properties[$0].name }.joined(
            separator: ", ")
        let message =
            persistedSnapshot == nil
            ? "\(id) was deleted from the store by someone else" : "\(id) changed in the store (\(changed))"
        return CoreDataError(.managedObjectMerge, message, objectID: id)
    }

    /// The object and what changed.
    open override var description: String {
        "<MergeConflict: \(sourceObject.objectID), old version \(oldVersionNumber), new version \(newVersionNumber)\(persistedSnapshot == nil ? ", deleted" : "")>"
    }
}
