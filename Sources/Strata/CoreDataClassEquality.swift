// Equality and hashing as `NSObject` gives them to Core Data's classes: an instance equals only
// itself, but for predicates, which compare by format as `NSPredicate` does.

extension ManagedObjectContext: Hashable {
    /// Whether `lhs` and `rhs` are the same context.
    public static func == (lhs: ManagedObjectContext, rhs: ManagedObjectContext) -> Bool { lhs === rhs }

    /// Hashes the context's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension PersistentStoreCoordinator: Hashable {
    /// Whether `lhs` and `rhs` are the same coordinator.
    public static func == (lhs: PersistentStoreCoordinator, rhs: PersistentStoreCoordinator) -> Bool { lhs === rhs }

    /// Hashes the coordinator's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension PersistentStore: Hashable {
    /// Whether `lhs` and `rhs` are the same store.
    public static func == (lhs: PersistentStore, rhs: PersistentStore) -> Bool { lhs === rhs }

    /// Hashes the store's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension FetchRequest: Hashable {
    /// Whether `lhs` and `rhs` are the same request.
    public static func == (lhs: FetchRequest, rhs: FetchRequest) -> Bool { lhs === rhs }

    /// Hashes the request's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension FetchPredicate: Hashable {
    /// Whether `lhs` and `rhs` are the same predicate, as `NSPredicate`'s `isEqual(_:)` compares
    /// them: the same format (`predicateFormat`); a block predicate equals only itself.
    public static func == (lhs: FetchPredicate, rhs: FetchPredicate) -> Bool {
        lhs === rhs || (!lhs.containsBlock && !rhs.containsBlock && lhs.predicateFormat == rhs.predicateFormat)
    }

    /// Hashes the predicate's format.
    public func hash(into hasher: inout Hasher) { hasher.combine(predicateFormat) }
}
