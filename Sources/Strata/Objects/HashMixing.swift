/// The hash tables of the object graph (registered objects, change sets, ID sets) hash bits
/// that are already unique, an object's address or an ID's key, with one multiply-and-shift
/// finalizer rather than through a `Hasher`, whose setup costs more than the lookup it serves.
/// The bits are addresses and keys of this process, never chosen by an attacker.
enum HashMixing {
    /// `bits` mixed with a table's `seed` by the SplitMix64 finalizer.
    static func mix(_ bits: UInt64, seed: Int) -> Int {
        var z = bits ^ UInt64(UInt(bitPattern: seed))
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: z ^ (z >> 31))
    }

    /// `bits` hashed for a table that keeps neighbours together: the bits above the lowest
    /// three mixed with `seed` (``mix(_:seed:)``), the lowest three kept. Bits that differ only
    /// in those three (keys made or fetched in a row) take neighbouring buckets of one group of
    /// eight, so that a run of them touches a few cache lines of the table, not one each; the
    /// groups are spread as ``mix(_:seed:)`` spreads bits.
    static func grouped(_ bits: UInt64, seed: Int) -> Int {
        mix(bits >> 3, seed: seed) << 3 | Int(bits & 7)
    }
}
