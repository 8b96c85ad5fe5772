extension ManagedObject {
    /// The object's hash in a `Set`, `Dictionary` or `OrderedSet`: its identity mixed with the
    /// table's seed, consistent with ``hash(into:)`` and `==` (identity).
    public func _rawHashValue(seed: Int) -> Int {
        HashMixing.mix(UInt64(UInt(bitPattern: ObjectIdentifier(self))), seed: seed)
    }
}

extension ManagedObjectID {
    /// The ID's hash in a `Set`, `Dictionary` or `OrderedSet`: its key (or temporary
    /// identifier) mixed with the table's seed, consistent with ``hash(into:)`` and `==`.
    public func _rawHashValue(seed: Int) -> Int {
        HashMixing.mix(hashBits, seed: seed)
    }
}
