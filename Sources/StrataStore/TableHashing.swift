/// The hash of the store's own hash tables, without a `Hasher` (whose setup costs more than the
/// lookup it serves): their keys (primary keys, entity numbers, block numbers) are the store's
/// own, never chosen by an attacker.
enum TableHashing {
    /// `bits` with a table's `seed`, spread by an odd multiplier, plus `extra` (other bits of the
    /// key, already spread), the high half folded onto the low bits the table's buckets are taken
    /// from.
    static func hash(_ bits: UInt64, seed: Int, adding extra: UInt64 = 0) -> Int {
        let spread = (bits ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15 &+ extra
        return Int(truncatingIfNeeded: spread ^ (spread >> 29))
    }
}

/// An integer key of one of the store's own tables (a block number, a segment id), hashed by
/// ``TableHashing`` rather than by a `Hasher`.
struct TableKey: Hashable, Sendable {
    /// The key.
    var value: UInt64

    func _rawHashValue(seed: Int) -> Int { TableHashing.hash(value, seed: seed) }
}
