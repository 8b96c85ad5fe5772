import Foundation
import Synchronization

/// A compact, universal identifier for a managed object: the store, the entity and the primary
/// key, or a temporary identifier before the object is first saved.
///
/// `Sendable` and `Hashable`: pass IDs between contexts and threads, never the objects.
public final class ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The object's entity.
    public let entity: EntityDescription
    /// The identifier of the store holding the object (`nil` while temporary).
    public let storeIdentifier: String?
    /// The primary key in the store (`0` while temporary).
    let primaryKey: Int64
    /// The temporary identifier of an unsaved object, unique in the process; 0 for a permanent
    /// ID (the counter starts at 1). Not an optional, so that an ID takes 56 bytes, one heap
    /// block of 64, where an optional would make it 80.
    private let temporaryBits: UInt64

    /// The temporary identifier of an unsaved object, unique in the process.
    var temporaryIdentifier: UInt64? { temporaryBits == 0 ? nil : temporaryBits }

    private static let temporaryCounter = Atomic<UInt64>(0)

    /// A permanent ID.
    init(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) {
        self.entity = entity
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        self.temporaryBits = 0
    }

    /// A temporary ID for a newly inserted object.
    init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.storeIdentifier = nil
        self.primaryKey = 0
        self.temporaryBits = Self.temporaryCounter.add(1, ordering: .relaxed).newValue
    }

    /// Whether the ID is temporary: the object has not been saved yet (or had no permanent ID
    /// obtained for it).
    public var isTemporaryID: Bool { temporaryBits != 0 }

    /// The URI of the object: `x-coredata://<store>/<Entity>/p<key>` for a permanent ID,
    /// `x-coredata:///<Entity>/t<UUID>` for a temporary one. Archive it and get the ID back with
    /// ``PersistentStoreCoordinator/managedObjectID(forURIRepresentation:)``.
    public func uriRepresentation() -> URL {
        if let temporaryIdentifier {
            return URL(
                string: "x-coredata:///\(entity.entityName)/t\(String(temporaryIdentifier, radix: 16, uppercase: true))"
            )!
        }
        return URL(string: "x-coredata://\(storeIdentifier!)/\(entity.entityName)/p\(primaryKey)")!
    }

    /// The URI representation.
    public var description: String { uriRepresentation().absoluteString }

    /// The name of the inheritance root, whose key space IDs share.
    private var rootName: String {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root.entityName
    }

    /// IDs are equal when they name the same object: the same temporary identifier, or the same
    /// store, entity hierarchy and primary key.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        if lhs === rhs { return true }
        if let left = lhs.temporaryIdentifier { return left == rhs.temporaryIdentifier }
        return rhs.temporaryIdentifier == nil && lhs.primaryKey == rhs.primaryKey
            && lhs.storeIdentifier == rhs.storeIdentifier
            && (lhs.entity === rhs.entity || lhs.rootName == rhs.rootName)
    }

    /// Hashes the key (or temporary identifier) only: cheap, and IDs of different stores with
    /// one key are rare and still told apart by equality.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashBits)
    }

    /// What the ID hashes on: the temporary identifier, or the primary key.
    var hashBits: UInt64 { temporaryBits != 0 ? temporaryBits : UInt64(bitPattern: primaryKey) }
}
