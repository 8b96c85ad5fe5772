extension ManagedObject {
    /// The object's hash in a `Set`, `Dictionary` or `OrderedSet`: its address grouped with the
    /// table's seed (``HashMixing/grouped(_:seed:)``), consistent with ``hash(into:)`` and `==`
    /// (identity). The address is taken in units of 128 bytes, less than an object takes, so
    /// objects allocated one after another take neighbouring buckets.
    public func _rawHashValue(seed: Int) -> Int {
        HashMixing.grouped(UInt64(UInt(bitPattern: ObjectIdentifier(self))) >> 7, seed: seed)
    }
}

extension ManagedObjectID {
    /// The ID's hash in a `Set`, `Dictionary` or `OrderedSet`: its key (or temporary
    /// identifier) grouped with the table's seed (``HashMixing/grouped(_:seed:)``), consistent
    /// with ``hash(into:)`` and `==`: IDs of keys made in a row take neighbouring buckets.
    public func _rawHashValue(seed: Int) -> Int {
        HashMixing.grouped(hashBits, seed: seed)
    }
}
